import { createHash } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import type { CrewSnapshot } from '../formats/console/snapshot.ts';
import { PAGE_CSP } from '../main/console/page.ts';
import { type CrewServer, type ServeOptions, serveCrew } from '../main/console/serve.ts';
import { FakeSource, crewSnapshot, lanesIn } from './helpers/crew-source.ts';
import { sleep, until } from './helpers/procs.ts';
import { EventStream, httpRequest } from './helpers/sse.ts';

// The web view's server without a browser: routes, framing, coalescing, backpressure, close.

const HOSTILE = '<script>alert(1)</script>"\'&';
const open: CrewServer[] = [];
const streams: EventStream[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const stream of streams.splice(0)) stream.destroy();
  for (const socket of sockets.splice(0)) socket.destroy();
  await Promise.all(open.splice(0).map((server) => server.close()));
});

async function start(source: FakeSource, options: ServeOptions = {}): Promise<CrewServer> {
  const server = await serveCrew(0, source, options);
  open.push(server);
  return server;
}
async function stream(url: string): Promise<EventStream> {
  const s = await EventStream.open(`${url}events`);
  streams.push(s);
  return s;
}
/** A stream opened again and again until the server admits it (not 503), for up to `ms`. */
async function streamOnceFree(url: string, what: string, ms = 5_000): Promise<EventStream> {
  const end = Date.now() + ms;
  for (;;) {
    const opened = await stream(url);
    if (opened.status !== 503) return opened;
    opened.destroy();
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(20); // polls a condition; nothing is inferred from the pause
  }
}
const initial = () => crewSnapshot([...lanesIn('running', 3), ...lanesIn('queued', 2, 3)]);
const laneCount = (snapshot: unknown) => (snapshot as CrewSnapshot).lanes.length;
// Lanes are never removed: a test that wants to tell snapshots apart numbers them by elapsedS.
const mark = (snapshot: unknown) => (snapshot as CrewSnapshot).elapsedS;
const event = (snapshot: CrewSnapshot, seq = 1) => JSON.stringify({ type: 'snapshot', seq, snapshot });

describe('serveCrew routes', () => {
  test('should listen on 127.0.0.1 on a free port when given 0', async () => {
    const server = await start(new FakeSource(initial()));
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:[1-9]\d*\/$/);
  });

  test('should serve the page with the current counts, its CSP and no other script', async () => {
    const server = await start(new FakeSource(crewSnapshot([...lanesIn('running', 3), { id: HOSTILE, state: 'failed', attempts: 1, code: null }])));
    const page = await httpRequest(server.url);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toBe(PAGE_CSP);
    expect(page.body).toContain('data-state="running" data-filter-state="running">running <b>3</b></a>');
    expect(page.body.match(/<script/g)).toHaveLength(1);
    expect(page.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;');
    // The CSP admits the inline script by its hash: the hash of exactly what the page holds.
    const script = page.body.slice(page.body.indexOf('<script>') + 8, page.body.lastIndexOf('</script>'));
    expect(PAGE_CSP).toContain(`'sha256-${createHash('sha256').update(script).digest('base64')}'`);
  });

  test('should serve the current snapshot as JSON', async () => {
    const source = new FakeSource(initial());
    const server = await start(source);
    const answer = await httpRequest(`${server.url}snapshot.json?x=1`);
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(answer.body)).toEqual(source.current);
  });

  test.each([
    ['GET', '/nope', 404],
    ['GET', '/events/', 404],
    ['POST', '/nope', 404],
    ['POST', '/', 405],
    ['PUT', '/snapshot.json', 405],
    ['HEAD', '/events', 405],
    ['DELETE', '/events', 405],
  ])('should answer %s %s with %i', async (method, path, status) => {
    const server = await start(new FakeSource(initial()));
    const answer = await httpRequest(new URL(path, server.url).href, { method });
    expect(answer.status).toBe(status);
    if (status === 405) expect(answer.headers['allow']).toBe('GET');
  });

  test.each([
    ['evil.example', 403],
    ['evil.example:80', 403],
    ['127.0.0.1.evil.example', 403],
    ['localhost:9999', 200],
    ['LOCALHOST', 200],
    ['[::1]:8080', 200],
  ])('should answer Host %s with %i (a rebound name cannot read the crew)', async (host, status) => {
    const server = await start(new FakeSource(initial()));
    expect((await httpRequest(`${server.url}snapshot.json`, { host })).status).toBe(status);
  });

  test('should refuse a port that is taken, and a port out of range', async () => {
    const server = await start(new FakeSource(initial()));
    const port = Number(new URL(server.url).port);
    await expect(serveCrew(port, new FakeSource(initial()))).rejects.toMatchObject({ code: 'EADDRINUSE' });
    await expect(serveCrew(70000, new FakeSource(initial()))).rejects.toThrow(RangeError);
    await expect(serveCrew(1.5, new FakeSource(initial()))).rejects.toThrow(RangeError);
  });
});

describe('serveCrew event stream', () => {
  test('should send the snapshot on connect as one data line of JSON', async () => {
    const lanes = [{ id: 'line\nbreak\r\n\u2028x', state: 'running', attempts: 1, code: null }];
    const source = new FakeSource(crewSnapshot(lanes));
    const server = await start(source);
    const s = await stream(server.url);
    expect(s.status).toBe(200);
    expect(s.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(s.headers['cache-control']).toBe('no-cache, no-transform');
    await s.waitForSnapshots(1);
    expect(s.events[0]![0]).toBe('id: 1');
    expect(s.events[0]).toHaveLength(2);
    expect(JSON.parse(s.events[0]![1]!.slice('data: '.length))).toEqual(JSON.parse(event(source.current)));
    expect(s.snapshots[0]).toEqual(source.current);
  });

  test('should coalesce a burst of changes into one event carrying the last', async () => {
    const source = new FakeSource(initial());
    const server = await start(source, { minIntervalMs: 200 });
    const s = await stream(server.url);
    await s.waitForSnapshots(1);
    const reads = source.reads;
    for (let n = 1; n <= 50; n += 1) source.set(crewSnapshot(lanesIn('running', n), { elapsedS: n }));
    await s.waitForSnapshots(2);
    // A later change is pushed after anything the burst still had coming: once it is in,
    // nothing of the burst can arrive any more.
    source.set(crewSnapshot(lanesIn('done', 1), { elapsedS: 1000 }));
    await s.waitForSnapshots(3);
    expect(s.snapshots.map(mark)).toEqual([1.5, 50, 1000]);
    expect(s.snapshots.map(laneCount)).toEqual([5, 50, 50]);
    expect(source.reads - reads).toBe(2);
  });

  test('should push at most one event per interval while changes keep coming, ending with the last', async () => {
    const source = new FakeSource(initial());
    const server = await start(source, { minIntervalMs: 200 });
    const s = await stream(server.url);
    await s.waitForSnapshots(1);
    const began = performance.now();
    for (let n = 1; n <= 60; n += 1) {
      source.set(crewSnapshot(lanesIn('running', n)));
      await sleep(10);
    }
    const spent = performance.now() - began;
    await until(() => laneCount(s.snapshots.at(-1)) === 60, 5_000, 'the last snapshot');
    const pushed = s.snapshots.length - 1;
    expect(pushed).toBeGreaterThanOrEqual(2);
    expect(pushed).toBeLessThanOrEqual(Math.ceil(spent / 200) + 1);
  });

  test('should coalesce to at most about four events a second by default', async () => {
    const source = new FakeSource(initial());
    const server = await start(source);
    const s = await stream(server.url);
    await s.waitForSnapshots(1);
    for (let n = 1; n <= 20; n += 1) source.set(crewSnapshot(lanesIn('running', n)));
    await s.waitForSnapshots(2);
    const began = performance.now();
    for (let n = 21; n <= 60; n += 1) {
      source.set(crewSnapshot(lanesIn('running', n)));
      await sleep(10);
    }
    const spent = performance.now() - began;
    await until(() => laneCount(s.snapshots.at(-1)) === 60, 5_000, 'the last snapshot');
    expect(s.snapshots.slice(0, 2).map(laneCount)).toEqual([5, 20]);
    expect(s.snapshots.length - 2).toBeLessThanOrEqual(Math.ceil(spent / 250) + 1);
  });

  test('should not send a snapshot a client already has, nor read one with no client', async () => {
    const source = new FakeSource(initial());
    const server = await start(source, { minIntervalMs: 0 });
    source.set(initial());
    // A push would be due at once (interval 0), long before a client's request is in: the
    // only read by the time the client has its first snapshot is the one made for it.
    const s = await stream(server.url);
    await s.waitForSnapshots(1);
    expect(source.reads).toBe(1);
    source.set(initial()); // equal content
    // The push of the equal snapshot has read it (and then sent nothing) ...
    await until(() => source.reads === 2, 5_000, 'the push of the equal snapshot');
    source.set(crewSnapshot(lanesIn('done', 1), { elapsedS: 9 }));
    // ... and the change after it arrives as the second event: nothing came in between.
    await s.waitForSnapshots(2);
    expect(s.snapshots.map(mark)).toEqual([1.5, 9]);
    // Only what changed travels: the head and the one lane whose state changed.
    expect(s.messages[1]).toMatchObject({ type: 'delta', seq: 2, from: 1, lanes: [{ id: 'lane-000', state: 'done' }] });
    expect(source.reads).toBe(3);
  });

  test('should keep serving the last good snapshot when the source throws', async () => {
    const source = new FakeSource(initial());
    const server = await start(source, { minIntervalMs: 0 });
    const s = await stream(server.url);
    await s.waitForSnapshots(1);
    const good = source.snapshot.bind(source);
    let throws = 0;
    source.snapshot = () => {
      throws += 1;
      throw new Error('source broke');
    };
    source.set(crewSnapshot(lanesIn('running', 9)));
    await until(() => throws === 1, 5_000, 'the push to read the broken source');
    expect((await httpRequest(server.url)).status).toBe(500);
    expect(laneCount(JSON.parse((await httpRequest(`${server.url}snapshot.json`)).body))).toBe(5);
    // Mended, the next change is the next event: the failed reads sent nothing before it.
    source.snapshot = good;
    source.set(crewSnapshot(lanesIn('done', 1), { elapsedS: 7 }));
    await s.waitForSnapshots(2);
    expect(s.snapshots.map(mark)).toEqual([1.5, 7]);
  });

  test('should send no event until the source gives a first snapshot', async () => {
    const source = new FakeSource(initial());
    const good = source.snapshot.bind(source);
    source.snapshot = () => {
      throw new Error('not ready');
    };
    const server = await start(source, { minIntervalMs: 0 });
    const s = await stream(server.url);
    source.snapshot = good;
    source.set(crewSnapshot(lanesIn('running', 2)));
    expect((await s.waitForSnapshots(1)).map(laneCount)).toEqual([2]);
    // Byte for byte the first thing on the stream: nothing was sent before it.
    expect(s.raw).toMatch(/^id: 1\ndata: [^\n]*\n\n$/);
    expect(s.messages).toEqual([JSON.parse(event(source.current))]);
  });

  test('should send heartbeat comments on a quiet stream', async () => {
    const server = await start(new FakeSource(initial()), { heartbeatMs: 50 });
    const s = await stream(server.url);
    await until(() => s.events.some((lines) => lines[0] === ': heartbeat'), 5_000, 'a heartbeat');
    expect(s.events.filter((lines) => lines.some((line) => line.startsWith('data: ')))).toHaveLength(1);
  });

  test('should send every change to many clients', async () => {
    const source = new FakeSource(initial());
    const server = await start(source, { minIntervalMs: 0 });
    const many = await Promise.all(Array.from({ length: 40 }, () => stream(server.url)));
    await Promise.all(many.map((s) => s.waitForSnapshots(1)));
    source.set(crewSnapshot(lanesIn('complete', 7)));
    await Promise.all(many.map((s) => s.waitForSnapshots(2)));
    expect(many.map((s) => s.snapshots.map(laneCount))).toEqual(many.map(() => [5, 7]));
  });

  test('should refuse a stream past maxClients with 503, and count a closed one as gone', async () => {
    const server = await start(new FakeSource(initial()), { maxClients: 2 });
    const a = await stream(server.url);
    const b = await stream(server.url);
    await a.waitForSnapshots(1);
    await b.waitForSnapshots(1);
    expect((await httpRequest(`${server.url}events`)).status).toBe(503);
    a.destroy();
    // The server forgets a stream when its connection closes, which it sees a moment later.
    const third = await streamOnceFree(server.url, 'a stream after one of two closed');
    expect(third.status).toBe(200);
    await third.waitForSnapshots(1);
  });

  test('should hold 256 streams by default and refuse the 257th', async () => {
    const server = await start(new FakeSource(initial()));
    const held = await Promise.all(Array.from({ length: 256 }, () => stream(server.url)));
    expect(held.filter((s) => s.status === 200)).toHaveLength(256);
    expect((await httpRequest(`${server.url}events`)).status).toBe(503);
  });

  test('should keep serving the others when a client disconnects mid-write', async () => {
    const source = new FakeSource(initial());
    const server = await start(source, { minIntervalMs: 0 });
    const leaving = await stream(server.url);
    const staying = await stream(server.url);
    await leaving.waitForSnapshots(1);
    await staying.waitForSnapshots(1);
    // A snapshot of about 4 MB: the leaving client drops while it is being written.
    const size = leaving.raw.length;
    source.set(crewSnapshot(lanesIn('running', 60_000)));
    await until(() => leaving.raw.length > size, 5_000, 'the big snapshot to start arriving');
    leaving.destroy();
    await staying.waitForSnapshots(2, 20_000);
    source.set(crewSnapshot(lanesIn('complete', 3), { elapsedS: 3 }));
    await staying.waitForSnapshots(3);
    expect(staying.snapshots.map(laneCount)).toEqual([5, 60_000, 60_000]);
    expect(staying.snapshots.map(mark)).toEqual([1.5, 1.5, 3]);
    expect(laneCount(JSON.parse((await httpRequest(`${server.url}snapshot.json`)).body))).toBe(3);
  });

  test('should drop a client whose socket does not drain, holding no more than one snapshot for it', async () => {
    const source = new FakeSource(initial());
    // Two streams at most: a third is admitted only once the server dropped the stalled one.
    const server = await start(source, { minIntervalMs: 0, stallMs: 300, maxClients: 2 });
    const { port } = new URL(server.url);
    // A reader that sends its request and then never reads.
    const slow = connect(Number(port), '127.0.0.1');
    sockets.push(slow);
    await new Promise<void>((resolve) => slow.once('connect', resolve));
    slow.write(`GET /events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    slow.pause();
    const fast = await stream(server.url);
    await fast.waitForSnapshots(1);
    // 30 snapshots of about 1 MB each, pushed as fast as they come.
    const pushes = 30;
    for (let n = 1; n <= pushes; n += 1) {
      source.set(crewSnapshot(lanesIn(`s${n}`, 15_000)));
      await until(() => fast.raw.includes(`"s${n}"`), 20_000, `push ${n} at the fast client`);
    }
    const perSnapshot = fast.raw.length / (fast.snapshots.length || 1);
    const third = await streamOnceFree(server.url, 'the server to drop the stalled stream', 20_000);
    expect(third.status).toBe(200);
    let received = 0;
    let closed = false;
    slow.on('data', (chunk: Buffer) => (received += chunk.length));
    slow.on('close', () => (closed = true));
    slow.resume();
    await until(() => closed, 10_000, 'the server to have dropped the stalled stream');
    // It got what the kernel's socket buffers held, never all 30 snapshots.
    process.stderr.write(`slow client: received ${received} bytes of ${pushes} x ${Math.round(perSnapshot)}\n`);
    expect(received).toBeLessThan((pushes * perSnapshot) / 2);
    expect(fast.snapshots.map(laneCount).at(-1)).toBe(15_000);
  });
});

describe('serveCrew close()', () => {
  test('should end every open stream, stop listening and unsubscribe', async () => {
    const source = new FakeSource(initial());
    const server = await serveCrew(0, source);
    const three = [await stream(server.url), await stream(server.url), await stream(server.url)];
    await Promise.all(three.map((s) => s.waitForSnapshots(1)));
    expect(source.subscribers).toBe(1);
    await server.close();
    await until(() => three.every((s) => s.ended), 5_000, 'every stream to end');
    expect(source.subscribers).toBe(0);
    await expect(httpRequest(server.url)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await server.close(); // twice is fine
  });

  test('should close promptly with a stalled reader holding a stream open', async () => {
    // About 16 MB: far more than loopback socket buffers take (the slow client above got
    // about 4 MB), so the stream's end cannot flush to a reader that does not read.
    const source = new FakeSource(crewSnapshot(lanesIn('running', 250_000)));
    const server = await serveCrew(0, source);
    const { port } = new URL(server.url);
    const slow = connect(Number(port), '127.0.0.1');
    sockets.push(slow);
    await new Promise<void>((resolve) => slow.once('connect', resolve));
    slow.write(`GET /events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    slow.pause();
    // The server has the stream once it read the snapshot for it.
    await until(() => source.reads === 1, 10_000, 'the server to open the stalled stream');
    const began = performance.now();
    await server.close(); // resolves only once every connection is gone
    const spent = performance.now() - began;
    // Promptly: at once or after the half-second grace, never after the 10 s stall drop.
    process.stderr.write(`close with a stalled reader: ${Math.round(spent)} ms\n`);
    expect(spent).toBeLessThan(5_000);
    expect(source.subscribers).toBe(0);
    let closed = false;
    slow.on('close', () => (closed = true));
    slow.resume();
    await until(() => closed, 10_000, 'the stalled stream to be closed');
    expect(slow.destroyed).toBe(true);
  });
});

describe('serveCrew lane routes', () => {
  class StorySource extends FakeSource {
    laneStory(id: string) {
      if (id === 'broken') throw new Error('store gone');
      return ['a', 'a.json'].includes(id) ? ({ lane: id } as unknown as import('../formats/console/lane-story.ts').LaneStory) : undefined;
    }
  }
  const lanePage = { render: (story: { lane: string }) => `<!doctype html><p>page of ${story.lane}</p>`, csp: "default-src 'none'" };

  test.each([
    ['lanes/a', 200, 'text/html; charset=utf-8', '<!doctype html><p>page of a</p>'],
    ['lanes/a.json', 200, 'application/json; charset=utf-8', '{"lane":"a"}\n'],
    ['lanes/a%2Ejson', 200, 'text/html; charset=utf-8', '<!doctype html><p>page of a.json</p>'],
    ['lanes/a.json.json', 200, 'application/json; charset=utf-8', '{"lane":"a.json"}\n'],
    ['lanes/a?x=1', 200, 'text/html; charset=utf-8', '<!doctype html><p>page of a</p>'],
    ['lanes/nobody', 404, 'text/plain; charset=utf-8', 'no such lane\n'],
    ['lanes/..%2F..%2Fetc%2Fpasswd.json', 404, 'text/plain; charset=utf-8', 'no such lane\n'],
    ['lanes/%E0%A4%A', 400, 'text/plain; charset=utf-8', 'bad lane id\n'],
    ['lanes/broken', 500, 'text/plain; charset=utf-8', 'lane unavailable\n'],
    ['lanes/a/b', 404, 'text/plain; charset=utf-8', 'not found\n'],
    ['lanes/', 404, 'text/plain; charset=utf-8', 'not found\n'],
  ])('GET /%s answers %i', async (path, status, type, body) => {
    const server = await start(new StorySource(initial()), { lanePage: lanePage as never });
    const answer = await httpRequest(`${server.url}${path}`);
    expect([answer.status, answer.headers['content-type'], answer.body]).toEqual([status, type, body]);
    if (status === 200 && type.startsWith('text/html')) expect(answer.headers['content-security-policy']).toBe("default-src 'none'");
  });

  test('a lane page is refused to another Host and to POST', async () => {
    const server = await start(new StorySource(initial()), { lanePage: lanePage as never });
    expect((await httpRequest(`${server.url}lanes/a`, { host: 'evil.example' })).status).toBe(403);
    expect((await httpRequest(`${server.url}lanes/a`, { method: 'POST' })).status).toBe(405);
  });
});
