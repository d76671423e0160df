import { get, type IncomingMessage } from 'node:http';
import { brotliDecompressSync, createBrotliDecompress, createGunzip, gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, test } from 'vitest';
import { chooseCoding } from '../main/console/compress.ts';
import { type CrewServer, serveCrew } from '../main/console/serve.ts';
import { FakeSource, crewSnapshot, lanesIn } from './helpers/crew-source.ts';

const open: CrewServer[] = [];
const responses: IncomingMessage[] = [];
afterEach(async () => {
  for (const res of responses.splice(0)) res.destroy();
  await Promise.all(open.splice(0).map((server) => server.close()));
});

async function start(source: FakeSource): Promise<CrewServer> {
  const server = await serveCrew(0, source, { minIntervalMs: 10 });
  open.push(server);
  return server;
}

function request(url: string, acceptEncoding: string | null): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = get(url, { headers: acceptEncoding === null ? {} : { 'Accept-Encoding': acceptEncoding } }, (res) => {
      responses.push(res);
      resolve(res);
    });
    req.on('error', reject);
  });
}

async function body(res: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('console compression', () => {
  test.each([
    ['gzip, deflate, br', 'br'],
    ['gzip', 'gzip'],
    ['br;q=0, gzip;q=0.5', 'gzip'],
    ['*', 'br'],
    ['*;q=0, identity', null],
    ['deflate', null],
    ['', null],
  ])('should answer Accept-Encoding %j with %j', (header, coding) => {
    expect(chooseCoding(header)).toBe(coding);
  });

  test('should send /snapshot.json compressed as asked, the same JSON, and say it varies by Accept-Encoding', async () => {
    const source = new FakeSource(crewSnapshot(lanesIn('work', 2_000)));
    const server = await start(source);
    const plain = await request(`${server.url}snapshot.json`, null);
    const text = (await body(plain)).toString('utf8');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers['vary']).toBe('Accept-Encoding');
    for (const [coding, decode] of [['gzip', gunzipSync], ['br', brotliDecompressSync]] as const) {
      const res = await request(`${server.url}snapshot.json`, coding);
      expect(res.headers['content-encoding']).toBe(coding);
      expect(res.headers['vary']).toBe('Accept-Encoding');
      const packed = await body(res);
      expect(Number(res.headers['content-length'])).toBe(packed.length);
      expect(decode(packed).toString('utf8')).toBe(text);
      // 2,000 lanes of repeated keys: a tenth of the bytes or less.
      expect(packed.length).toBeLessThan(text.length / 10);
    }
  });

  test.each([
    ['gzip', createGunzip],
    ['br', createBrotliDecompress],
  ] as const)('should stream /events in %s with each event readable as it is sent, the stream left open', async (coding, decoder) => {
    const source = new FakeSource(crewSnapshot(lanesIn('work', 3)));
    const server = await start(source);
    const res = await request(`${server.url}events`, coding);
    expect(res.headers['content-encoding']).toBe(coding);
    expect(res.headers['vary']).toBe('Accept-Encoding');
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    const inflate = decoder();
    res.pipe(inflate);
    let text = '';
    const frames = (n: number) =>
      new Promise<string[]>((resolve, reject) => {
        const check = () => {
          const done = text.split('\n\n').filter((frame) => frame.startsWith('id: '));
          if (done.length >= n) {
            inflate.off('data', onData);
            resolve(done);
          }
        };
        const onData = (chunk: Buffer) => {
          text += chunk.toString('utf8');
          check();
        };
        inflate.on('data', onData);
        inflate.once('error', reject);
        check();
      });
    // The first message arrives whole while the stream stays open: each frame was flushed.
    const [first] = await frames(1);
    expect(first).toMatch(/^id: \d+\ndata: \{"type":"snapshot"/);
    source.set(crewSnapshot([...lanesIn('work', 2), ...lanesIn('complete', 1, 2)]));
    const [, second] = await frames(2);
    expect(second).toMatch(/^id: \d+\ndata: \{"type":"delta"/);
    expect(res.complete).toBe(false);
  });

  test('should stream /events uncompressed to a client that asks for no coding', async () => {
    const server = await start(new FakeSource(crewSnapshot(lanesIn('work', 1))));
    const res = await request(`${server.url}events`, null);
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.headers['vary']).toBe('Accept-Encoding');
    const chunk = await new Promise<Buffer>((resolve) => res.once('data', resolve));
    expect(chunk.toString('utf8')).toMatch(/^id: \d+\ndata: \{"type":"snapshot"/);
  });
});
