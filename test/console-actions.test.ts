import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { AnswerResult, ConsoleActions, ControlRequest, ControlResult } from '../formats/console/actions.ts';
import { MAX_ACTION_BODY_BYTES } from '../formats/console/actions.ts';
import { type CrewServer, serveCrew } from '../main/console/serve.ts';
import { mintToken } from '../main/console/action-guard.ts';
import { FakeSource, crewSnapshot, lanesIn } from './helpers/crew-source.ts';
import { DEFAULT_UI, renderCrewView } from '../formats/console/view.ts';

// The console's acting routes: every refusal with its code and HTTP status, and every
// action reaching the port, through a port that records what it was asked.

interface Reply {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

class RecordingActions implements ConsoleActions {
  readonly controls: ControlRequest[] = [];
  readonly answers: { lanes: readonly string[] | 'all'; reply: string; by: string }[] = [];
  refuse: ControlResult | null = null;
  control(request: ControlRequest): Promise<ControlResult> {
    this.controls.push(request);
    return Promise.resolve(this.refuse ?? { status: 'requested', code: null, detail: null, seq: this.controls.length });
  }
  answer(lanes: readonly string[] | 'all', reply: string, by: string): Promise<readonly AnswerResult[]> {
    this.answers.push({ lanes, reply, by });
    if (reply === 'nonsense') return Promise.reject(Object.assign(new Error('--reply "nonsense" is not a gate reply'), { code: 'GATE_REPLY_UNPARSED' }));
    const named = lanes === 'all' ? ['lane-1', 'lane-2'] : lanes;
    return Promise.resolve(named.map((lane) => ({ lane, status: 'answered' as const, code: null, detail: null, gateRev: 1, state: 'complete', by: `human:${by}` })));
  }
}

function post(url: string, path: string, options: { body?: string; headers?: Record<string, string>; method?: string } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, url), { method: options.method ?? 'POST', headers: options.headers ?? {} }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => {
        let body: Record<string, unknown> = {};
        try {
          body = JSON.parse(text) as Record<string, unknown>;
        } catch {
          body = { text };
        }
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    // A refused oversized body may close the connection mid-write.
    req.on('error', reject);
    req.end(options.body);
  });
}

describe('the console acts only on a request that passes every check', () => {
  const actions = new RecordingActions();
  const source = new FakeSource(crewSnapshot(lanesIn('failed', 2), { now: '2026-12-01T12:00:00.000Z' }));
  const token = mintToken();
  let server: CrewServer;
  let origin: string;
  const good = (extra: Record<string, string> = {}) => ({ Origin: origin, 'Content-Type': 'application/json', 'X-Laneward-Token': token, ...extra });

  beforeAll(async () => {
    server = await serveCrew(0, source, { actions, token });
    origin = server.url.replace(/\/$/, '');
  });
  afterAll(async () => {
    await server?.close();
  });

  test('should mint a base64url token of at least 128 bits and name it in the URL to open', async () => {
    const minted = await serveCrew(0, source, { actions });
    try {
      expect(minted.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(minted.openUrl).toBe(`${minted.url}?token=${minted.token}`);
    } finally {
      await minted.close();
    }
    expect(mintToken()).not.toBe(mintToken());
    const readOnly = await serveCrew(0, source);
    try {
      expect([readOnly.token, readOnly.openUrl]).toEqual([null, readOnly.url]);
      expect(await post(readOnly.url, '/actions/retry', { body: '{"lane":"lane-0"}', headers: { Origin: readOnly.url.replace(/\/$/, ''), 'Content-Type': 'application/json', 'X-Laneward-Token': 'x' } })).toEqual({ status: 403, body: { status: 'refused', code: 'CONSOLE_READ_ONLY', detail: 'this console only shows the crew' } });
    } finally {
      await readOnly.close();
    }
  });

  test.each([
    ['no token', () => good({ 'X-Laneward-Token': '' }), 401, 'CONSOLE_TOKEN_MISSING'],
    ['a wrong token', () => good({ 'X-Laneward-Token': mintToken() }), 403, 'CONSOLE_TOKEN_WRONG'],
    ['the token with one character more', () => good({ 'X-Laneward-Token': `${token}A` }), 403, 'CONSOLE_TOKEN_WRONG'],
    ['a cross-origin POST', () => good({ Origin: 'http://evil.example' }), 403, 'CONSOLE_ORIGIN_REFUSED'],
    ['a POST from another loopback port', () => good({ Origin: 'http://127.0.0.1:1' }), 403, 'CONSOLE_ORIGIN_REFUSED'],
    ['a POST naming no Origin', () => { const h: Record<string, string> = good(); delete h['Origin']; return h; }, 403, 'CONSOLE_ORIGIN_REFUSED'],
    ['a form post (text/plain)', () => good({ 'Content-Type': 'text/plain' }), 415, 'CONSOLE_BODY_INVALID'],
    ['a urlencoded form', () => good({ 'Content-Type': 'application/x-www-form-urlencoded' }), 415, 'CONSOLE_BODY_INVALID'],
  ])('should refuse %s, and reach no port', async (_name, headers, status, code) => {
    const before = actions.controls.length;
    const answer = await post(server.url, '/actions/retry', { body: '{"lane":"lane-0"}', headers: headers() });
    expect([answer.status, answer.body['status'], answer.body['code']]).toEqual([status, 'refused', code]);
    expect(actions.controls.length).toBe(before);
  });

  test('should refuse a Host that is not loopback before anything else', async () => {
    const answer = await post(server.url, '/actions/retry', { body: '{"lane":"lane-0"}', headers: good({ Host: `evil.example:${new URL(server.url).port}` }) });
    expect(answer.status).toBe(403);
    expect(actions.controls).toHaveLength(0);
  });

  test('should act through a forward: the Origin is the one the loopback Host names, whatever its port', async () => {
    const answer = await post(server.url, '/actions/stop', { body: '{"by":"ann"}', headers: good({ Host: 'localhost:9000', Origin: 'http://localhost:9000' }) });
    expect([answer.status, answer.body['status']]).toEqual([200, 'requested']);
    expect(actions.controls.splice(0)).toEqual([{ action: 'stop', lane: null, by: 'human:ann' }]);
    // The Host's own name with another port in the Origin is another page.
    const other = await post(server.url, '/actions/stop', { body: '{"by":"ann"}', headers: good({ Host: 'localhost:9000', Origin: 'http://localhost:9001' }) });
    expect([other.status, other.body['code']]).toEqual([403, 'CONSOLE_ORIGIN_REFUSED']);
    expect(actions.controls).toHaveLength(0);
  });

  test.each(['GET', 'PUT', 'DELETE'])('should change nothing on %s to an action route (405 CONSOLE_ACTION_METHOD, Allow: POST)', async (method) => {
    const answer = await post(server.url, '/actions/stop', { method, headers: good() });
    expect([answer.status, answer.body['code']]).toEqual([405, 'CONSOLE_ACTION_METHOD']);
    expect(actions.controls).toHaveLength(0);
  });

  test('should refuse an oversized body (413) whether it names its length or not', async () => {
    const big = JSON.stringify({ lane: 'x'.repeat(MAX_ACTION_BODY_BYTES) });
    const named = await post(server.url, '/actions/retry', { body: big, headers: good({ 'Content-Length': String(Buffer.byteLength(big)) }) });
    expect([named.status, named.body['code']]).toEqual([413, 'CONSOLE_BODY_INVALID']);
    const chunked = await post(server.url, '/actions/retry', { body: big, headers: good({ 'Transfer-Encoding': 'chunked' }) });
    expect([chunked.status, chunked.body['code']]).toEqual([413, 'CONSOLE_BODY_INVALID']);
    expect(actions.controls).toHaveLength(0);
  });

  test.each([
    ['/actions/retry', 'not json', 'the body is not JSON'],
    ['/actions/retry', '[1]', 'the body is not a JSON object'],
    ['/actions/retry', '{"by":"ann"}', 'lane must be a lane id'],
    ['/actions/retry', '{"lane":"lane-0"}', 'by is required: the name of the person who asks'],
    ['/actions/retry', '{"lane":"lane-0","force":true}', 'unknown field "force" (takes lane, by)'],
    ['/actions/stop', '{"lane":"lane-0"}', 'unknown field "lane" (takes by)'],
    ['/actions/cancel-call', '{"lane":"lane-0","by":"two words"}', 'by must be a name: one word of visible characters, at most 64'],
    ['/actions/answer', '{"lanes":"all","reply":"rec"}', 'by is required: the name of the person who answers'],
    ['/actions/answer', '{"lanes":[],"reply":"rec","by":"ann"}', 'lanes must be "all" or 1 to 1000 lane ids'],
    ['/actions/answer', '{"lanes":"all","reply":" ","by":"ann"}', 'reply must be a gate reply of at most 4096 characters'],
  ])('should refuse a bad body for %s (%s: 400 CONSOLE_BODY_INVALID)', async (path, body, detail) => {
    expect(await post(server.url, path, { body, headers: good() })).toEqual({ status: 400, body: { status: 'refused', code: 'CONSOLE_BODY_INVALID', detail } });
    expect([actions.controls, actions.answers]).toEqual([[], []]);
  });

  test('should bring each control action to the port, as the named person\'s', async () => {
    const sent = [
      ['/actions/retry', '{"lane":"lane-0","by":"ann"}'],
      ['/actions/cancel-call', '{"lane":"lane-1","by":"ann"}'],
      ['/actions/cancel-lane', '{"lane":"lane-0","by":"bob"}'],
      ['/actions/stop', '{"by":"bob"}'],
    ] as const;
    const replies = [];
    for (const [path, body] of sent) replies.push(await post(server.url, path, { body, headers: good({ 'Content-Type': 'application/json; charset=utf-8' }) }));
    expect(actions.controls).toEqual([
      { action: 'retry', lane: 'lane-0', by: 'human:ann' },
      { action: 'cancel_call', lane: 'lane-1', by: 'human:ann' },
      { action: 'cancel_lane', lane: 'lane-0', by: 'human:bob' },
      { action: 'stop', lane: null, by: 'human:bob' },
    ]);
    expect(replies.map((r) => [r.status, r.body['status'], r.body['seq']])).toEqual([
      [200, 'requested', 1],
      [200, 'requested', 2],
      [200, 'requested', 3],
      [200, 'requested', 4],
    ]);
    // A refusal of the crew's (a lane that cannot be retried) comes back as its code, 409.
    actions.refuse = { status: 'refused', code: 'CREW_CONTROL_REFUSED', detail: 'lane-0 is complete', seq: null };
    const refused = await post(server.url, '/actions/retry', { body: '{"lane":"lane-0","by":"ann"}', headers: good() });
    actions.refuse = null;
    expect(refused).toEqual({ status: 409, body: { action: 'retry', lane: 'lane-0', status: 'refused', code: 'CREW_CONTROL_REFUSED', detail: 'lane-0 is complete', seq: null } });
    actions.controls.length = 0;
  });

  test('should bring answers to the port for named lanes and for all, and a reply the grammar refuses back as its code', async () => {
    const two = await post(server.url, '/actions/answer', { body: '{"lanes":["lane-0","lane-1","lane-0"],"reply":"rec","by":"ann"}', headers: good() });
    expect(two.status).toBe(200);
    expect((two.body['answers'] as AnswerResult[]).map((a) => [a.lane, a.status, a.by])).toEqual([
      ['lane-0', 'answered', 'human:ann'],
      ['lane-1', 'answered', 'human:ann'],
    ]);
    expect((await post(server.url, '/actions/answer', { body: '{"lanes":"all","reply":"as-is","by":"bob"}', headers: good() })).status).toBe(200);
    const bad = await post(server.url, '/actions/answer', { body: '{"lanes":"all","reply":"nonsense","by":"bob"}', headers: good() });
    expect([bad.status, bad.body['code']]).toEqual([400, 'GATE_REPLY_UNPARSED']);
    expect(actions.answers).toEqual([
      { lanes: ['lane-0', 'lane-1'], reply: 'rec', by: 'ann' },
      { lanes: 'all', reply: 'as-is', by: 'bob' },
      { lanes: 'all', reply: 'nonsense', by: 'bob' },
    ]);
  });
});

describe('renderCrewView: the action buttons of a page that can act', () => {
  const NOW = '2026-12-01T12:00:00.000Z';
  const lane = (id: string, state: string, code: string | null = null) => ({ id, state, attempts: 1, code, detail: null, costUsd: 0, startedAt: NOW, since: NOW, activityAt: NOW });
  const snapshot = crewSnapshot([lane('f', 'failed', 'CHILD_FAILED'), lane('i', 'interrupted', 'CANCELLED'), lane('w', 'interrupted', 'CREW_OWNER_PENDING'), lane('r', 'work'), lane('q', 'queued'), lane('c', 'complete')], { now: NOW });
  const buttons = (html: string) => [...html.matchAll(/<tr data-lane="([^"]+)"[^>]*>(?:(?!<\/tr>).)*<\/tr>/g)].map((m) => `${m[1]}: ${[...m[0].matchAll(/data-action="([^"]+)"/g)].map((b) => b[1]).join(',')}`);

  test('should offer a retry to a failed or interrupted lane, a cancel of its call and itself to a running one, and a cancel to a queued or waiting one', () => {
    const html = renderCrewView(snapshot, { ...DEFAULT_UI, sort: 'id', acting: true });
    const table = html.slice(html.indexOf('<table id="lanes">'));
    expect(buttons(table)).toEqual(['f: retry', 'i: retry', 'w: cancel-lane', 'r: cancel-call,cancel-lane', 'q: cancel-lane', 'c: ']);
    expect(table).toContain('<th>act</th>');
  });

  test('should offer none to a page that cannot act', () => {
    const html = renderCrewView(snapshot, { ...DEFAULT_UI, sort: 'id' });
    expect(html).not.toContain('data-action');
    expect(html).not.toContain('<th>act</th>');
  });
});
