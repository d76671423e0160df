import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { fakeServerRunner } from '../fixtures/model-server/crew-script.ts';
import { scenario, startModelServer, type ModelServer, type Script } from '../fixtures/model-server/index.ts';
import { blocks, pauseThen, stall, text, toolCall, type Reply } from '../fixtures/model-server/replies.ts';
import { launchOf } from '../main/providers/launch.ts';
import { nowMs } from '../workers/supervise/monotonic-timer.ts';
import { finishedWork, type Outcome } from '../workers/supervise/outcome.ts';
import type { SupervisionSpec } from '../workers/supervise/spec.ts';
import { supervise } from '../workers/supervise/supervise.ts';
import { CLI_BIN } from './helpers/real-crew.ts';
import { canRun, killQuietly, procStat, settleTagged } from './helpers/procs.ts';
import { tempRoot } from './helpers/tmp.ts';

// The real claude CLI (the claude-code preset's own argv) against the fake model server,
// supervised in-process: stalls, a CLI that never exits after its result, slow but live
// streams, and a program that never starts its stream.
//
// The lease runs from the spawn, so claude's own start (a large bundle, 1 s on a quiet machine
// and past 3 s on a loaded one) is inside it: LEASE is what a loaded CI machine's start fits in
// with room to spare, and every figure a case judges is set against it.
const LEASE = 5_000;

const TAG_VALUE = `${process.pid}-${Date.now()}`;
const TAG = `LANEWARD_REALSUP_TEST=${TAG_VALUE}`;
const root = tempRoot('real-supervision');
let server: ModelServer;
let n = 0;

beforeAll(async () => {
  server = await startModelServer(text('unused'));
});
afterAll(async () => {
  await server?.close();
});
afterEach(async () => {
  const leaked = await settleTagged(TAG, 3_000);
  for (const pid of leaked) killQuietly(pid);
  expect(leaked, 'processes of this test still running').toEqual([]);
});

interface Run {
  readonly outcome: Outcome;
  readonly dir: string;
  readonly pid: number;
  readonly stdout: string;
}

/** One call of the claude-code preset (agent role) under supervise, against `script`. */
async function runClaude(script: Script | Reply, over: Partial<SupervisionSpec>, options: { readonly settings?: unknown; readonly bin?: string } = {}): Promise<Run> {
  const dir = join(root, `call-${++n}`);
  mkdirSync(join(dir, 'cwd'), { recursive: true });
  server.setScript(script);
  const runner = { ...fakeServerRunner('claude-code', server.url, join(dir, 'home')), bin: options.bin ?? join(CLI_BIN, 'claude') };
  if (options.settings !== undefined) {
    mkdirSync(join(dir, 'home', '.claude'), { recursive: true });
    writeFileSync(join(dir, 'home', '.claude', 'settings.json'), JSON.stringify(options.settings));
  }
  writeFileSync(join(dir, 'prompt.md'), 'Do the task.\n');
  const launch = launchOf(runner, { role: 'agent', prompt: join(dir, 'prompt.md'), result: join(dir, 'result.md') });
  let pid = 0;
  let stdout = '';
  const outcome = await supervise(
    {
      argv: launch.argv,
      env: { ...launch.env, LANEWARD_REALSUP_TEST: TAG_VALUE },
      cwd: join(dir, 'cwd'),
      stdio: 'pipe',
      mode: 'admitted_progress_inactivity',
      progress: 'claude-stream-json',
      timeoutMs: LEASE,
      cleanupReserveMs: 0,
      postProviderMs: 5_000,
      graceMs: 500,
      teardownMs: 5_000,
      stdoutLimit: 1 << 22,
      stderrLimit: 1 << 20,
      startedAt: nowMs(),
      action: null,
      descriptorSha256: null,
      stdinFile: launch.stdinFile!,
      provider: launch.provider!,
      ...over,
    },
    undefined,
    { onSpawn: (p) => (pid = p), onStdout: (c) => (stdout += c.toString()) },
  );
  if (process.env['REALSUP_FIGURES'] !== undefined) {
    const { code, marks, durationMs, goneMs, expiryLateMs } = outcome;
    console.log(JSON.stringify({ code, marks, durationMs: Math.round(durationMs), goneMs: goneMs === null ? null : Math.round(goneMs), expiryLateMs }));
  }
  return { outcome, dir, pid, stdout };
}

const types = (stdout: string) =>
  stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { type: string; subtype?: string; event?: { type: string } })
    .map((e) => (e.type === 'stream_event' ? `stream_event:${e.event?.type}` : e.subtype === undefined ? e.type : `${e.type}:${e.subtype}`));

const pidIn = (file: string) => Number(readFileSync(file, 'utf8').trim());

describe('real claude under supervise', () => {
  test('stalled mid-message after a tool started a SIGTERM-trapping process: LEASE_EXPIRED, claude torn down', async () => {
    const trapper = join(root, 'trapper.pid');
    const run = await runClaude(
      scenario([
        toolCall('Bash', { command: `sh -c 'trap "" TERM; echo $$ > ${trapper}; exec sleep 300'`, description: 'start a trapper', run_in_background: true }),
        stall({ afterChunks: 1, text: 'Working on the next step now' }),
      ]),
      {},
    );
    const tpid = pidIn(trapper);
    const survivor = procStat(tpid);
    killQuietly(tpid);
    expect(run.outcome).toMatchObject({ status: 'timeout', code: 'LEASE_EXPIRED', leaseExpired: true, cleanupConfirmed: true, providerStarted: true });
    expect(run.outcome.marks).toBeGreaterThan(0);
    expect(run.outcome.durationMs).toBeGreaterThanOrEqual(LEASE);
    expect(run.outcome.durationMs).toBeLessThan(20_000);
    expect(finishedWork(run.outcome)).toBe(false);
    expect(canRun(run.pid)).toBe(false);
    // The second request stalled after its tool result: claude was mid-message.
    expect(types(run.stdout)).toContain('user');
    expect(types(run.stdout).at(-1)).not.toBe('result:success');
    // claude 2.1.328 spawns every Bash command (background or not) and every hook in a
    // session of its own: the census follows it from its parent while claude runs, so the
    // SIGTERM-trapping process is signalled and proven gone with the rest of the tree.
    // Gone, or a zombie its reparenting left for init to reap: dead either way.
    expect(survivor === undefined || (survivor.state === 'Z' && survivor.threads <= 1), `the trapper outlived a confirmed teardown: ${JSON.stringify(survivor)}`).toBe(true);
  }, 60_000);

  test('hangs in a SessionEnd hook after its result: PROVIDER_NO_EXIT, its result kept', async () => {
    const hook = join(root, 'hook.pid');
    const run = await runClaude(text('The final answer.'), { exitAfterTerminalMs: 2_000 }, {
      settings: { hooks: { SessionEnd: [{ hooks: [{ type: 'command', command: `echo $$ >> ${hook}; exec sleep 300`, timeout: 300 }] }] } },
    });
    // Every hook claude started is listed: it may start the hook again as the teardown's
    // SIGTERM ends it, and exit at once, leaving that one with neither parent nor founder.
    const hooks = readFileSync(hook, 'utf8').trim().split('\n').map(Number);
    process.stdout.write(`real-supervision: SessionEnd hooks started: ${hooks.length}\n`);
    const survivors = hooks.map((pid) => procStat(pid)).filter((stat) => stat !== undefined && !(stat.state === 'Z' && stat.threads <= 1));
    for (const pid of hooks) killQuietly(pid);
    expect(run.outcome).toMatchObject({ status: 'failed', code: 'PROVIDER_NO_EXIT', leaseExpired: false, timedOut: false, cleanupConfirmed: true, providerStarted: true });
    expect(finishedWork(run.outcome)).toBe(true);
    expect(run.outcome.provider).toMatchObject({ finalText: 'The final answer.', finished: true });
    expect(types(run.stdout).at(-1)).toBe('result:success');
    expect(run.outcome.durationMs).toBeGreaterThanOrEqual(2_000);
    expect(run.outcome.durationMs).toBeLessThan(20_000);
    expect(canRun(run.pid)).toBe(false);
    // The hook runs in a session of its own too: followed and torn down the same way.
    expect(survivors, 'hooks that outlived a confirmed teardown').toEqual([]);
  }, 60_000);

  test('a reply whose blocks each come after 1.5 s renews a 5 s lease past 7.5 s: ok', async () => {
    const parts = ['One.', 'Two.', 'Three.', 'Four.', 'Five.'];
    const run = await runClaude(blocks(parts.map((t) => ({ type: 'text' as const, text: t })), { blockDelayMs: 1_500 }), {});
    expect(run.outcome).toMatchObject({ status: 'ok', code: null, childExitCode: 0, leaseExpired: false, cleanupConfirmed: true });
    // Past the lease by half of it: only renewals kept the call alive that long.
    expect(run.outcome.durationMs).toBeGreaterThan(LEASE * 1.5);
    expect(run.outcome.marks).toBeGreaterThan(0);
    expect(run.outcome.provider?.finalText).toContain('Five.');
    // The stream reader passes over text deltas by this prefix, unparsed: the real CLI writes them so.
    expect(run.stdout.split('\n').some((line) => line.startsWith('{"type":"stream_event","event":{"type":"content_block_delta"'))).toBe(true);
  }, 60_000);

  test('12 s of silence before the first byte of a reply: LEASE_EXPIRED, the tree gone', async () => {
    const run = await runClaude(pauseThen(12_000, text('too late')), {});
    expect(run.outcome).toMatchObject({ status: 'timeout', code: 'LEASE_EXPIRED', leaseExpired: true, cleanupConfirmed: true });
    expect(run.outcome.durationMs).toBeGreaterThanOrEqual(LEASE);
    expect(run.outcome.durationMs).toBeLessThan(12_000);
    expect(canRun(run.pid)).toBe(false);
    expect(types(run.stdout)).not.toContain('result:success');
  }, 60_000);

  test('a preset program that never prints: PROVIDER_NO_START', async () => {
    const bin = join(root, 'silent-claude');
    writeFileSync(bin, '#!/bin/sh\nexec sleep 300\n');
    chmodSync(bin, 0o755);
    const run = await runClaude(text('unused'), { firstEventMs: 1_500, timeoutMs: 30_000 }, { bin });
    expect(run.outcome).toMatchObject({ status: 'timeout', code: 'PROVIDER_NO_START', timedOut: true, leaseExpired: false, providerStarted: true, cleanupConfirmed: true });
    expect(run.outcome.durationMs).toBeGreaterThanOrEqual(1_500);
    expect(run.outcome.durationMs).toBeLessThan(20_000);
    expect(canRun(run.pid)).toBe(false);
  }, 60_000);

  test('real claude prints its first event within firstEventMs: ok', async () => {
    // The lease is not what this case tests: long enough that only firstEventMs could end it.
    const run = await runClaude(text('Started in time.'), { firstEventMs: 15_000, timeoutMs: 30_000 });
    expect(run.outcome).toMatchObject({ status: 'ok', code: null, childExitCode: 0, cleanupConfirmed: true });
    expect(run.outcome.provider?.finalText).toBe('Started in time.');
    expect(types(run.stdout)[0]).toBe('system:init');
    expect(existsSync(join(run.dir, 'result.md'))).toBe(false);
  }, 60_000);
});
