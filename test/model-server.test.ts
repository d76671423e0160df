import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, test } from 'vitest';
import { clientSetup, writeClientFiles, type Cli } from '../fixtures/model-server/clients.ts';
import {
  httpError,
  pauseThen,
  scenario,
  sequence,
  stall,
  startModelServer,
  text,
  toolCall,
  type Api,
  type ModelServer,
  type Reply,
} from '../fixtures/model-server/index.ts';
import { runClient, type ClientRun, type RunOptions } from '../fixtures/model-server/run-client.ts';

// The fake model server, and the three real agent CLIs run against it with no network.
// What each CLI does is pinned as seen (docs/providers.md); a CLI upgrade that
// changes its stream or its retries fails here first.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BIN_DIR = join(ROOT, 'test', 'real-clis', 'node_modules', '.bin');

const servers: ModelServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function serve(script: Parameters<typeof startModelServer>[0]): Promise<ModelServer> {
  const server = await startModelServer(script);
  servers.push(server);
  return server;
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'laneward-model-server-'));
  dirs.push(dir);
  return dir;
}

type Json = Record<string, any>;

/** One HTTP request to the server, body read whole. */
function post(url: string, path: string, body: unknown): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  return new Promise((ok, fail) => {
    const req = httpRequest(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (s: string) => (text += s));
      res.on('end', () => ok({ status: res.statusCode ?? 0, headers: res.headers, text }));
      res.on('error', fail);
    });
    req.on('error', fail);
    req.end(JSON.stringify(body));
  });
}

function sseEvents(raw: string): string[] {
  return [...raw.matchAll(/^event: (.+)$/gm)].map((m) => m[1]!);
}

describe('startModelServer', () => {
  const anthropicBody = (messages: Json[]) => ({ model: 'claude-sonnet-4-5', stream: true, messages });

  test('should stream an Anthropic text and tool_use message, usage on message_start and message_delta', async () => {
    const server = await serve(scenario([toolCall('Write', { file_path: 'a.txt', content: 'x' }), text('done and dusted', { chunks: 2 })]));
    const first = await post(server.url, '/v1/messages', anthropicBody([{ role: 'user', content: 'go MARK-7' }]));
    expect(sseEvents(first.text)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(first.text).toContain('"name":"Write"');
    expect(first.text).toContain('"stop_reason":"tool_use"');
    const second = await post(
      server.url,
      '/v1/messages',
      anthropicBody([
        { role: 'user', content: [{ type: 'text', text: '<system-reminder>ctx</system-reminder>' }, { type: 'text', text: 'go MARK-7' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Write', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'File created' }] },
      ]),
    );
    expect(second.text).toContain('"text":"done and "');
    expect(second.text).toContain('"usage":{"output_tokens":50}');
    const seen = server.requests.map((r) => r.model && { turn: r.model.turn, prompt: r.model.prompt, toolResult: r.model.toolResult });
    expect(seen).toEqual([
      { turn: 0, prompt: 'go MARK-7', toolResult: undefined },
      { turn: 1, prompt: 'go MARK-7', toolResult: 'File created' },
    ]);
  });

  test('should answer each API error in that API’s shape, with retry-after when asked', async () => {
    const server = await serve(() => httpError(429, { retryAfterS: 3 }));
    const anthropic = await post(server.url, '/v1/messages', anthropicBody([{ role: 'user', content: 'x' }]));
    expect(anthropic.status).toBe(429);
    expect(anthropic.headers['retry-after']).toBe('3');
    expect(JSON.parse(anthropic.text)).toEqual({ type: 'error', error: { type: 'rate_limit_error', message: 'Fake 429: rate_limit_error' } });
    const openai = await post(server.url, '/v1/responses', { model: 'gpt-5.5', stream: true, input: 'x' });
    expect(JSON.parse(openai.text).error.code).toBe('rate_limit_exceeded');
    const gemini = await post(server.url, '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse', { contents: [] });
    expect(JSON.parse(gemini.text).error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED' });
    server.setScript(() => httpError(529));
    const overloaded = await post(server.url, '/v1/messages', anthropicBody([{ role: 'user', content: 'x' }]));
    expect([overloaded.status, JSON.parse(overloaded.text).error.type]).toEqual([529, 'overloaded_error']);
  });

  test('should keep a stalled stream open until close, and hold a paused one silent first', async () => {
    const server = await startModelServer(() => stall({ afterChunks: 1 }));
    let ended = false;
    const stalled = post(server.url, '/v1/messages', anthropicBody([{ role: 'user', content: 'x' }])).then(
      () => (ended = true),
      () => (ended = true),
    );
    await new Promise((r) => setTimeout(r, 1_000));
    expect(ended).toBe(false);
    await server.close();
    await stalled;
    expect(ended).toBe(true);

    const paused = await serve(() => pauseThen(1_200, text('late')));
    const started = Date.now();
    const reply = await post(paused.url, '/v1/responses', { model: 'gpt-5.5', stream: true, input: 'x' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    expect(sseEvents(reply.text).at(-1)).toBe('response.completed');
  });
});

describe('one server, many lanes', () => {
  test('should answer concurrent conversations by their own position and prompt marker', async () => {
    const server = await serve((r) => {
      const lane = /LANE-(\d+)/.exec(r.prompt)?.[1] ?? '?';
      return r.turn === 0 ? toolCall('Write', { file_path: `lane-${lane}.txt`, content: lane }) : text(`lane ${lane} done`);
    });
    const lanes = Array.from({ length: 8 }, (_, i) => i + 1);
    const firsts = await Promise.all(
      lanes.map((lane) => post(server.url, '/v1/messages', { model: 'm', stream: true, messages: [{ role: 'user', content: `go LANE-${lane}` }] })),
    );
    // The tool input streams as input_json_delta pieces; joined, they name this lane's file.
    const inputs = firsts.map((reply) => JSON.parse([...reply.text.matchAll(/"partial_json":("(?:[^"\\]|\\.)*")/g)].map((m) => JSON.parse(m[1]!)).join('')));
    expect(inputs).toEqual(lanes.map((lane) => ({ file_path: `lane-${lane}.txt`, content: String(lane) })));
    const seconds = await Promise.all(
      lanes.map((lane) =>
        post(server.url, '/v1/messages', {
          model: 'm',
          stream: true,
          messages: [
            { role: 'user', content: `go LANE-${lane}` },
            { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'Write', input: {} }] },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'ok' }] },
          ],
        }),
      ),
    );
    const texts = seconds.map((reply) => [...reply.text.matchAll(/"text_delta","text":("(?:[^"\\]|\\.)*")/g)].map((m) => JSON.parse(m[1]!)).join(''));
    expect(texts).toEqual(lanes.map((lane) => `lane ${lane} done`));
    expect(server.requests).toHaveLength(16);
  });

  test.skipIf(!CASES_READY())('should serve one lane of each CLI at once, each running its own tool', async () => {
    const server = await serve((r) => {
      const lane = /LANE-(\w+)/.exec(r.prompt)?.[1] ?? 'unknown';
      if (r.turn > 0) return text(`lane ${lane} done`);
      return CASES.find((c) => c.api === r.api)!.writeFile(`${lane}.txt`, lane);
    });
    const root = tempDir();
    const runs = await Promise.all(
      CASES.map((c) => {
        const cwd = join(root, c.cli);
        mkdirSync(cwd);
        return runClient(c.cli, { bin: join(BIN_DIR, c.bin), baseUrl: server.url, cwd, dir: join(root, `${c.cli}-home`), prompt: `Write your file. LANE-${c.bin}` });
      }),
    );
    for (const [i, c] of CASES.entries()) {
      expect(runs[i]!.code).toBe(0);
      expect(readFileSync(join(root, c.cli, `${c.bin}.txt`), 'utf8')).toBe(c.bin);
      expect(c.finalText(runs[i]!)).toBe(`lane ${c.bin} done`);
    }
    expect(server.requests.filter((r) => r.model).length).toBe(6);
  });
});

/** Each CLI's label for one stream line: its type, and the sub-kind that tells lines apart. */
function label(cli: Cli, e: unknown): string {
  if (typeof e !== 'object' || e === null) return 'non-json';
  const j = e as Json;
  switch (cli) {
    case 'claude-code':
      return j['type'] === 'stream_event' ? `stream_event:${j['event'].type}` : j['subtype'] ? `${j['type']}:${j['subtype']}` : j['type'];
    case 'codex':
      return j['item'] ? `${j['type']}:${j['item'].type}` : j['type'];
    case 'gemini-cli':
      return [j['type'], j['role'], j['status']].filter((x) => x !== undefined).join(':');
  }
}

/** Labels with consecutive repeats folded (deltas), so a pin does not depend on chunking. */
function sequenceOf(cli: Cli, run: ClientRun): string[] {
  const out: string[] = [];
  for (const e of run.events) {
    const l = label(cli, e);
    if (out.at(-1) !== l) out.push(l);
  }
  return out;
}

interface CliCase {
  readonly cli: Cli;
  readonly bin: string;
  readonly api: Api;
  /** The CLI's own tool call that writes `name` in its cwd. */
  readonly writeFile: (name: string, content: string) => Reply;
  readonly textTurn: readonly string[];
  readonly toolTurn: readonly string[];
  readonly finalText: (run: ClientRun) => string;
  readonly sessionId: (run: ClientRun) => string;
  /** Token counts the stream reports at its end. */
  readonly usage: (run: ClientRun) => { input: number; output: number };
}

const events = (run: ClientRun) => run.events.filter((e): e is Json => typeof e === 'object' && e !== null);

const CASES: readonly CliCase[] = [
  {
    cli: 'claude-code',
    bin: 'claude',
    api: 'anthropic',
    writeFile: (name, content) => toolCall('Write', { file_path: name, content }),
    textTurn: ['system:init', 'assistant', 'result:success'],
    toolTurn: ['system:init', 'assistant', 'user', 'assistant', 'result:success'],
    finalText: (run) => events(run).find((e) => e['type'] === 'result')?.['result'],
    sessionId: (run) => events(run)[0]?.['session_id'],
    usage: (run) => {
      const u = events(run).find((e) => e['type'] === 'result')?.['usage'];
      return { input: u.input_tokens, output: u.output_tokens };
    },
  },
  {
    cli: 'codex',
    bin: 'codex',
    api: 'openai',
    writeFile: (name, content) => toolCall('exec_command', { cmd: `printf '%s' '${content}' > ${name}` }),
    textTurn: ['thread.started', 'turn.started', 'item.completed:agent_message', 'turn.completed'],
    toolTurn: [
      'thread.started',
      'turn.started',
      'item.started:command_execution',
      'item.completed:command_execution',
      'item.completed:agent_message',
      'turn.completed',
    ],
    finalText: (run) => events(run).filter((e) => e['item']?.type === 'agent_message').at(-1)?.['item'].text,
    sessionId: (run) => events(run).find((e) => e['type'] === 'thread.started')?.['thread_id'],
    usage: (run) => {
      const u = events(run).find((e) => e['type'] === 'turn.completed')?.['usage'];
      return { input: u.input_tokens, output: u.output_tokens };
    },
  },
  {
    cli: 'gemini-cli',
    bin: 'gemini',
    api: 'gemini',
    writeFile: (name, content) => toolCall('write_file', { file_path: name, content }),
    textTurn: ['init', 'message:user', 'message:assistant', 'result:success'],
    toolTurn: ['init', 'message:user', 'tool_use', 'tool_result:success', 'message:assistant', 'result:success'],
    finalText: (run) =>
      events(run)
        .filter((e) => e['type'] === 'message' && e['role'] === 'assistant')
        .map((e) => e['content'])
        .join(''),
    sessionId: (run) => events(run).find((e) => e['type'] === 'init')?.['session_id'],
    usage: (run) => {
      const s = events(run).find((e) => e['type'] === 'result')?.['stats'];
      return { input: s.input_tokens, output: s.output_tokens };
    },
  },
];

function CASES_READY(): boolean {
  return CASES.every((c) => existsSync(join(BIN_DIR, c.bin)));
}

/** True while any process of the group `pid` led is still alive. */
function groupAlive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe.each(CASES)('$cli against the fake model server', (c) => {
  const bin = join(BIN_DIR, c.bin);
  const run = (server: ModelServer, o: Partial<RunOptions> & { cwd: string; dir: string }) =>
    runClient(c.cli, { bin, baseUrl: server.url, prompt: 'Say hello. LANE-MARK-3', ...o });

  test.skipIf(!existsSync(bin))('should stream a text reply with fixed usage, one model request, and no other traffic', async () => {
    const server = await serve(text('Hello from the fake model.'));
    const root = tempDir();
    const result = await run(server, { cwd: root, dir: join(root, 'home') });
    expect(result.code).toBe(0);
    expect(sequenceOf(c.cli, result)).toEqual(c.textTurn);
    expect(c.finalText(result)).toBe('Hello from the fake model.');
    expect(c.usage(result)).toEqual({ input: 1000, output: 50 });
    expect(server.requests.map((r) => r.api)).toEqual([c.api]);
    expect(server.requests[0]!.model).toMatchObject({ prompt: 'Say hello. LANE-MARK-3', turn: 0, stream: true });
    expect(groupAlive(result.pid)).toBe(false);
    if (c.cli === 'claude-code') {
      // $3 / $15 per million tokens: 1000 in, 50 out.
      expect(events(result).at(-1)?.['total_cost_usd']).toBeCloseTo(0.00375, 8);
    }
  });

  test.skipIf(!existsSync(bin))('should run its own tool to write a file in its cwd, then send the result back', async () => {
    const server = await serve(scenario([c.writeFile('hello.txt', 'hi from the fake'), text('Done writing.')]));
    const root = tempDir();
    const cwd = join(root, 'work');
    mkdirSync(cwd);
    const result = await run(server, { cwd, dir: join(root, 'home'), prompt: 'Write hello.txt' });
    expect(result.code).toBe(0);
    expect(readFileSync(join(cwd, 'hello.txt'), 'utf8')).toBe('hi from the fake');
    expect(sequenceOf(c.cli, result)).toEqual(c.toolTurn);
    expect(c.finalText(result)).toBe('Done writing.');
    const models = server.requests.map((r) => r.model!);
    expect(models.map((m) => [m.turn, m.toolResult === undefined])).toEqual([
      [0, true],
      [1, false],
    ]);
    // Usage is per request, summed over the turn's two requests.
    expect(c.usage(result)).toEqual({ input: 2000, output: 100 });
  });

  test.skipIf(!existsSync(bin))('should retry a 429 by itself, and say so where pinned', async () => {
    const server = await serve(sequence([httpError(429, { retryAfterS: 1 }), text('Recovered.')]));
    const root = tempDir();
    const result = await run(server, { cwd: root, dir: join(root, 'home') });
    expect(result.code).toBe(0);
    expect(c.finalText(result)).toBe('Recovered.');
    expect(server.requests).toHaveLength(2);
    const gapMs = server.requests[1]!.time - server.requests[0]!.time;
    expect(gapMs).toBeGreaterThanOrEqual(900); // each waits at least the retry-after second
    const seen = sequenceOf(c.cli, result);
    if (c.cli === 'claude-code') {
      expect(seen).toEqual(['system:init', 'system:api_retry', 'assistant', 'result:success']);
      expect(events(result)[1]).toMatchObject({ attempt: 1, max_retries: 10, error_status: 429, error: 'rate_limit' });
    } else if (c.cli === 'codex') {
      expect(seen).toEqual(['thread.started', 'turn.started', 'error', 'item.completed:agent_message', 'turn.completed']);
      expect(events(result)[2]?.['message']).toBe('Reconnecting... 1/5 (exceeded retry limit, last status: 429 Too Many Requests)');
    } else {
      // Gemini says nothing on its stream; stderr tells, and it waits its own backoff (~5 s).
      expect(seen).toEqual(c.textTurn);
      expect(result.stderr).toContain('Attempt 1 failed: Fake 429: RESOURCE_EXHAUSTED');
      expect(gapMs).toBeGreaterThanOrEqual(4_000);
    }
  });

  test.skipIf(!existsSync(bin))('should give up on a 429 after its retry limit with a failing exit and an error on its stream', async () => {
    const server = await serve(() => httpError(429, { retryAfterS: 1 }));
    const root = tempDir();
    const result = await run(server, { cwd: root, dir: join(root, 'home'), retries: 1 });
    expect(server.requests).toHaveLength(2);
    const last = events(result).at(-1)!;
    if (c.cli === 'claude-code') {
      expect(result.code).toBe(1);
      expect(sequenceOf(c.cli, result)).toEqual(['system:init', 'system:api_retry', 'assistant', 'result:success']);
      // The subtype stays `success`: is_error and terminal_reason tell the failure.
      expect(last).toMatchObject({ is_error: true, terminal_reason: 'api_error', api_error_status: 429, total_cost_usd: 0 });
      expect(last['result']).toBe('API Error: Request rejected (429) · Fake 429: rate_limit_error');
    } else if (c.cli === 'codex') {
      expect(result.code).toBe(1);
      expect(sequenceOf(c.cli, result)).toEqual(['thread.started', 'turn.started', 'error', 'turn.failed']);
      expect(last['error'].message).toBe('exceeded retry limit, last status: 429 Too Many Requests');
    } else {
      // The exit code is the HTTP status modulo 256 (429 → 173; 500 gives 244, 529 gives 17).
      expect(result.code).toBe(429 % 256);
      expect(sequenceOf(c.cli, result)).toEqual(['init', 'message:user', 'result:error']);
      expect(last['error'].message).toContain('Fake 429: RESOURCE_EXHAUSTED');
    }
  });

  test.skipIf(!existsSync(bin))('should send the earlier conversation when resumed with the session id from its stream', async () => {
    const server = await serve(text('First answer.'));
    const root = tempDir();
    const options = { cwd: root, dir: join(root, 'home') };
    const first = await run(server, { ...options, prompt: 'First question.' });
    const id = c.sessionId(first);
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    server.setScript(text('Second answer.'));
    const second = await run(server, { ...options, prompt: 'Second question.', resume: id });
    expect(second.code).toBe(0);
    expect(c.finalText(second)).toBe('Second answer.');
    expect(c.sessionId(second)).toBe(id);
    const resumed = server.requests.at(-1)!.model!;
    expect(resumed).toMatchObject({ turn: 1, prompt: 'Second question.' });
    expect(resumed.allUserText).toContain('First question.');
    expect(JSON.stringify(resumed.body)).toContain('First answer.');
    // claude's cost and codex's usage carry the first run's over; gemini's stats are this run's.
    const carried = { 'claude-code': 2000, codex: 2000, 'gemini-cli': 1000 }[c.cli];
    if (c.cli === 'claude-code') expect(events(second).at(-1)?.['total_cost_usd']).toBeCloseTo(0.0075, 8);
    else expect(c.usage(second).input).toBe(carried);
  });
});

describe.skipIf(!existsSync(join(BIN_DIR, 'claude')))('claude-code --include-partial-messages', () => {
  test('should add the raw stream events around each assistant message', async () => {
    const server = await serve(text('Hello from the fake model.'));
    const root = tempDir();
    const result = await runClient('claude-code', {
      bin: join(BIN_DIR, 'claude'),
      baseUrl: server.url,
      cwd: root,
      dir: join(root, 'home'),
      prompt: 'Say hello.',
      partialMessages: true,
    });
    expect(result.code).toBe(0);
    // The whole `assistant` line comes before its block's content_block_stop.
    expect(sequenceOf('claude-code', result)).toEqual([
      'system:init',
      'system:status',
      'stream_event:message_start',
      'stream_event:content_block_start',
      'stream_event:content_block_delta',
      'assistant',
      'stream_event:content_block_stop',
      'stream_event:message_delta',
      'stream_event:message_stop',
      'result:success',
    ]);
  });
});

describe.skipIf(!existsSync(join(BIN_DIR, 'codex')))('codex exec and stdin', () => {
  test('should wait for stdin to end even with the prompt on its argv', async () => {
    const server = await serve(text('Hello from the fake model.'));
    const root = tempDir();
    const setup = clientSetup('codex', { baseUrl: server.url, dir: join(root, 'home') });
    writeClientFiles(setup, join(root, 'home'));
    const argv = [...setup.argv.slice(0, -1), 'Say hello.']; // the prompt as an argument, not `-`
    const child = spawn(join(BIN_DIR, 'codex'), argv, { cwd: root, env: { PATH: process.env['PATH'] ?? '', ...setup.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((ok) => child.on('close', ok));
    try {
      await new Promise((r) => setTimeout(r, 3_000));
      // Still reading stdin ("Reading additional input from stdin..."): no request yet.
      expect(server.requests).toHaveLength(0);
      child.stdin.end();
      expect(await exited).toBe(0);
      expect(server.requests).toHaveLength(1);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
