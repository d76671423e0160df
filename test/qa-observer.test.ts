import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BUNDLE, codesOf, ensureBuilt } from './helpers/cli.ts';
import { exitOf, killQuietly, settleTagged, taggedPids, until } from './helpers/procs.ts';
import { callLog, field, linesOf, OBSERVERS, qa, qaCtx, start, statusOf, turn, type QaCtx } from './helpers/qa.ts';
import { tempRoot } from './helpers/tmp.ts';

// Observer calls fail as typed outcomes: tool policy, lease, malformed verdicts, refused
// descriptors. Never retried; the verdict of a failed call is discarded.

let ctx: QaCtx;
const root = tempRoot('qa-observer');
let lanes = 0;
const fresh = () => {
  lanes += 1;
  return { lane: `obs-${lanes}`, log: join(root, `calls-${lanes}.jsonl`) };
};

beforeAll(() => {
  ensureBuilt();
  ctx = qaCtx(root);
});
afterAll(async () => {
  expect(await settleTagged(ctx.tag, 5_000)).toEqual([]);
});

describe('tool policy per mode', () => {
  test('should end a bootstrap that uses a shell tool as TOOL_DENIED and discard its passing verdict', async () => {
    const { lane, log } = fresh();
    const started = start(ctx, lane, 'violator', ['--log', log]);
    expect(started.code).toBe(1);
    expect(codesOf(started.stderr)).toEqual(['TOOL_DENIED']);
    const line = linesOf(started, 'QA_OBSERVER_FAILED:')[0]!;
    expect([field(line, 'mode'), field(line, 'code')]).toEqual(['bootstrap', 'TOOL_DENIED']);
    expect(line).toContain('tool Bash is outside the bootstrap policy (read, search)');
    expect(statusOf(ctx, lane)).toMatchObject({ ready: false, bootstrapLen: null });
    // The frames of the failed call are kept, the tool among them.
    expect(statusOf(ctx, lane).frames.bootstrap).toBeGreaterThan(0);
    expect(callLog(log)).toHaveLength(1);
    expect(await settleTagged(ctx.tag, 5_000)).toEqual([]);
  });

  test('should enforce the cadence policy on codex-json events, and never resend the delta the observer received', () => {
    const { lane, log } = fresh();
    expect(start(ctx, lane, 'violator', ['--in', 'cadence', '--format', 'codex-json', '--log', log], { action: 'observe.codex' }).code).toBe(0);
    const outs = ['A-0', 'A-1', 'A-2', 'B-3', 'B-4', 'B-5'].map((text) => turn(ctx, lane, 'user', text));
    expect(outs.map((o) => o.code)).toEqual([0, 0, 0, 0, 0, 0]);
    for (const out of [outs[2]!, outs[5]!]) {
      const line = linesOf(out, 'QA_OBSERVER_FAILED:')[0]!;
      expect([field(line, 'mode'), field(line, 'code')]).toEqual(['cadence', 'TOOL_DENIED']);
      expect(line).toContain('tool command_execution is outside the cadence policy (search)');
    }
    const cadence = callLog(log).filter((c) => c.mode === 'cadence');
    expect(cadence.map((c) => [...c.prompt.matchAll(/[AB]-\d/g)].map((m) => m[0]))).toEqual([['A-0', 'A-1', 'A-2'], ['B-3', 'B-4', 'B-5']]);
  });

  test('should allow the shell in the cross-check (full policy)', () => {
    const { lane } = fresh();
    expect(start(ctx, lane, 'violator', ['--in', 'cross-check']).code).toBe(0);
    const finished = qa(ctx, ['finish', '--lane', lane]);
    expect(finished.code).toBe(0);
    expect(field(linesOf(finished, 'QA_CROSS_CHECK:')[0]!, 'completion')).toBe('allowed');
  });
});

describe('bounded observer calls', () => {
  test('should end a stalled bootstrap as LEASE_EXPIRED (exit 124) and leave no process', async () => {
    const { lane, log } = fresh();
    const started = start(ctx, lane, 'stall', ['--log', log], { timeoutMs: 1_500 });
    expect(started.code).toBe(124);
    expect(codesOf(started.stderr)).toEqual(['LEASE_EXPIRED']);
    expect(field(linesOf(started, 'QA_OBSERVER_FAILED:')[0]!, 'code')).toBe('LEASE_EXPIRED');
    expect(callLog(log)).toHaveLength(1);
    expect(await settleTagged(ctx.tag, 5_000)).toEqual([]);
  });

  test('should abort completion when the cross-check stalls (LEASE_EXPIRED, no retry)', async () => {
    const { lane, log } = fresh();
    expect(start(ctx, lane, 'stall', ['--in', 'cross-check', '--log', log], { timeoutMs: 1_500 }).code).toBe(0);
    const finished = qa(ctx, ['finish', '--lane', lane]);
    expect(finished.code).toBe(124);
    const line = linesOf(finished, 'QA_CROSS_CHECK:')[0]!;
    expect([field(line, 'verdict'), field(line, 'code'), field(line, 'completion')]).toEqual(['error', 'LEASE_EXPIRED', 'aborted']);
    expect(callLog(log).map((c) => c.mode)).toEqual(['bootstrap', 'cross-check']);
    expect(statusOf(ctx, lane)).toMatchObject({ state: 'active' });
    expect(await settleTagged(ctx.tag, 5_000)).toEqual([]);
  });

  test('should tear a cadence observer down on SIGINT: CANCELLED, exit 130, the turn kept', async () => {
    const { lane, log } = fresh();
    expect(start(ctx, lane, 'stall', ['--in', 'cadence', '--log', log]).code).toBe(0);
    expect(turn(ctx, lane, 'user', 't0').code).toBe(0);
    expect(turn(ctx, lane, 'user', 't1').code).toBe(0);
    const [name, value] = ctx.tag.split('=') as [string, string];
    const child = spawn(process.execPath, [BUNDLE, 'qa', 'turn', '--lane', lane, '--role', 'user', '--text', 't2', '--state', ctx.state], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, [name]: value } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = exitOf(child).then(({ code }) => code);
    await until(() => callLog(log).some((c) => c.mode === 'cadence'), 20_000, 'the cadence call to start');
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(codesOf(stderr)).toEqual(['CANCELLED']);
    const failed = stdout.split('\n').find((line) => line.startsWith('QA_OBSERVER_FAILED:'))!;
    expect([field(failed, 'mode'), field(failed, 'code')]).toEqual(['cadence', 'CANCELLED']);
    expect(statusOf(ctx, lane)).toMatchObject({ turns: 3, lastSent: 3 });
    expect(await settleTagged(ctx.tag, 5_000)).toEqual([]);
  });

  test.each([
    ['a bootstrap', 'start', 'bootstrap'],
    ['a cadence check', 'turn', 'cadence'],
  ])('should remove the call directory %s killed with its command left behind, on the next %s', async (_name, next, mode) => {
    const { lane, log } = fresh();
    const calls = () => readdirSync(join(ctx.state, 'qa', lane)).filter((name) => name.startsWith('call-'));
    const args = ['qa', 'start', '--lane', lane, '--observer', `node ${OBSERVERS}/stall.mjs {prompt} {result} --in ${mode} --log ${log}`, '--actions', ctx.actions.file, '--trust', ctx.actions.trust, '--action', 'observe', '--timeout-ms', '20000', '--state', ctx.state];
    if (mode === 'cadence') {
      expect(start(ctx, lane, 'stall', ['--in', 'cadence', '--log', log]).code).toBe(0);
      expect(turn(ctx, lane, 'user', 't0').code).toBe(0);
      expect(turn(ctx, lane, 'user', 't1').code).toBe(0);
      args.splice(0, args.length, 'qa', 'turn', '--lane', lane, '--role', 'user', '--text', 't2', '--state', ctx.state);
    }
    const [name, value] = ctx.tag.split('=') as [string, string];
    const child = spawn(process.execPath, [BUNDLE, ...args], { stdio: 'ignore', env: { ...process.env, [name]: value } });
    const exited = exitOf(child).then(({ code }) => code);
    await until(() => callLog(log).some((c) => c.mode === mode), 20_000, `the ${mode} call to start`);
    child.kill('SIGKILL');
    await exited;
    // The observer the killed command supervised is an orphan now: ended here, as a test.
    for (const pid of taggedPids(ctx.tag)) killQuietly(pid);
    expect(await settleTagged(ctx.tag, 5_000)).toEqual([]);
    expect(calls()).toHaveLength(1);
    const again = next === 'start' ? start(ctx, lane, 'pass') : turn(ctx, lane, 'user', 't3');
    expect(again.code).toBe(0);
    expect(calls()).toEqual([]);
  });

  test('should report an observer command that cannot start (COMMAND_NOT_FOUND, exit 127)', () => {
    const { lane } = fresh();
    const started = qa(ctx, ['start', '--lane', lane, '--observer', 'laneward-no-such-observer {prompt} {result}', '--actions', ctx.actions.file, '--trust', ctx.actions.trust, '--action', 'observe']);
    expect(started.code).toBe(127);
    expect(codesOf(started.stderr)).toEqual(['COMMAND_NOT_FOUND']);
  });
});

describe('verdict files', () => {
  test.each(['notjson', 'schema', 'noguidance', 'missing', 'latin1'])('should fail a %s verdict as QA_VERDICT_MALFORMED (exit 1), once', (kind) => {
    const { lane, log } = fresh();
    const started = start(ctx, lane, 'malformed', ['--kind', kind, '--log', log]);
    expect(started.code).toBe(1);
    expect(codesOf(started.stderr)).toEqual(['QA_VERDICT_MALFORMED']);
    expect(field(linesOf(started, 'QA_OBSERVER_FAILED:')[0]!, 'code')).toBe('QA_VERDICT_MALFORMED');
    expect(callLog(log)).toHaveLength(1);
    expect(statusOf(ctx, lane)).toMatchObject({ ready: false });
  });
});

describe('the signed action decides', () => {
  test.each([
    ['observe.fd', 'QA_POLICY_UNENFORCEABLE'],
    ['observe.deadline', 'QA_POLICY_UNENFORCEABLE'],
    ['no-such-action', 'ACTION_UNKNOWN'],
  ])('should refuse action %s before anything runs (%s, exit 3) and record no lane', (action, code) => {
    const { lane, log } = fresh();
    const started = start(ctx, lane, 'pass', ['--log', log], { action });
    expect(started.code).toBe(3);
    expect(codesOf(started.stderr)).toEqual([code]);
    expect(callLog(log)).toEqual([]);
    const status = qa(ctx, ['status', '--lane', lane]);
    expect(status.code).toBe(3);
    expect(codesOf(status.stderr)).toEqual(['QA_NO_OBSERVER']);
    // A --json report that ends with a code carries its fix, as the error line does.
    const json = qa(ctx, ['status', '--lane', lane, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, code: 'QA_NO_OBSERVER', fix: 'start the lane with laneward qa start --lane ID --observer ... before finishing it' });
  });
});
