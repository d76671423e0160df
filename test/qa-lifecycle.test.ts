import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { codesOf, ensureBuilt } from './helpers/cli.ts';
import { settleTagged } from './helpers/procs.ts';
import { callLog, field, linesOf, prefixes, qa, qaCtx, start, statusOf, turn, writeText, type QaCtx } from './helpers/qa.ts';
import { tempRoot } from './helpers/tmp.ts';

// The QA lifecycle through the built CLI, with fixture observers as real processes.

let ctx: QaCtx;
const root = tempRoot('qa-lifecycle');
let lanes = 0;
/** A fresh lane id and its observer call log. */
const fresh = () => {
  lanes += 1;
  return { lane: `lane-${lanes}`, log: join(root, `calls-${lanes}.jsonl`) };
};

beforeAll(() => {
  ensureBuilt();
  ctx = qaCtx(root);
});
afterAll(async () => {
  expect(await settleTagged(ctx.tag, 5_000)).toEqual([]);
});

describe('qa start: observer bootstrap', () => {
  test('should bootstrap read-only, set readiness and record the bootstrap length', () => {
    const { lane, log } = fresh();
    const started = start(ctx, lane, 'pass', ['--log', log]);
    expect(started.code).toBe(0);
    expect(prefixes(started)).toEqual(['QA_LANE_STARTED:', 'QA_OBSERVER_READY:']);
    expect(linesOf(started, 'QA_OBSERVER_READY:')[0]).toBe(`QA_OBSERVER_READY: lane=${lane} call=1 note="bootstrap ok (call 1)"`);
    const calls = callLog(log);
    expect(calls.map((c) => [c.mode, c.tools.join(',')])).toEqual([['bootstrap', 'read,search']]);
    expect(calls[0]!.prompt).toContain('Tool policy (bootstrap): read, search.');
    const status = statusOf(ctx, lane);
    expect(status).toMatchObject({ state: 'active', ready: true, bootstrapLen: 1, exchanges: 1, calls: 1 });
    expect(status.frames.bootstrap).toBeGreaterThan(0);
  });

  test('should refuse a second start of an active, ready lane (QA_LANE_ACTIVE, exit 3)', () => {
    const { lane } = fresh();
    expect(start(ctx, lane, 'pass').code).toBe(0);
    const again = start(ctx, lane, 'pass');
    expect(again.code).toBe(3);
    expect(codesOf(again.stderr)).toEqual(['QA_LANE_ACTIVE']);
  });

  test('should keep cadence paused while the bootstrap has not passed', () => {
    const { lane, log } = fresh();
    const started = start(ctx, lane, 'fail', ['--fail-modes', 'bootstrap', '--log', log]);
    expect(started.code).toBe(3);
    expect(codesOf(started.stderr)).toEqual(['QA_BOOTSTRAP_FAILED']);
    expect(field(linesOf(started, 'QA_OBSERVER_FAILED:')[0]!, 'code')).toBe('QA_BOOTSTRAP_FAILED');
    const outs = [1, 2, 3, 4, 5, 6].map((i) => turn(ctx, lane, i % 2 ? 'user' : 'assistant', `t${i}`));
    for (const out of outs) expect(out.code).toBe(0);
    expect(outs.map((out) => linesOf(out, 'QA_CADENCE_PAUSED:').length)).toEqual([0, 0, 1, 0, 0, 1]);
    expect(outs.flatMap((out) => linesOf(out, 'QA_UPDATE:'))).toEqual([]);
    expect(callLog(log).map((c) => c.mode)).toEqual(['bootstrap']);
  });
});

describe('qa turn: delta ingestion and cadence', () => {
  test('should count turns, not decisions: user and assistant turns alike close the window, reasoning does not', () => {
    const { lane, log } = fresh();
    expect(start(ctx, lane, 'pass', ['--log', log]).code).toBe(0);
    const roles = ['user', 'reasoning', 'reasoning', 'user', 'reasoning', 'user'];
    const outs = roles.map((role, i) => turn(ctx, lane, role, `turn ${i}`));
    // Three user turns (no assistant decision at all) close the window of 3.
    expect(outs.map((out) => linesOf(out, 'QA_UPDATE:').length)).toEqual([0, 0, 0, 0, 0, 1]);
    expect(linesOf(outs[5]!, 'QA_UPDATE:')[0]).toBe(`QA_UPDATE: lane=${lane} call=2 turns=0-3 verdict=pass note="cadence ok (call 2)" guidance=-`);
    expect(callLog(log).map((c) => [c.mode, c.tools.join(',')])).toEqual([['bootstrap', 'read,search'], ['cadence', 'search']]);
  });

  test('should take the cadence from LANEWARD_QA_CADENCE', () => {
    const { lane } = fresh();
    expect(start(ctx, lane, 'pass').code).toBe(0);
    const env = { LANEWARD_QA_CADENCE: '2' };
    const outs = ['user', 'assistant', 'user', 'assistant'].map((role, i) => turn(ctx, lane, role, `t${i}`, { env }));
    expect(outs.map((out) => linesOf(out, 'QA_UPDATE:').map((line) => field(line, 'turns')))).toEqual([[], ['0-2'], [], ['2-4']]);
  });

  test('should forward only new user and assistant turns, never replayed, never reasoning', () => {
    const { lane, log } = fresh();
    expect(start(ctx, lane, 'pass', ['--log', log]).code).toBe(0);
    const script: [string, string][] = [
      ['user', 'ALPHA-0'], ['reasoning', 'SECRET-REASONING-1'], ['assistant', 'BRAVO-1'], ['user', 'CHARLIE-2'],
      ['assistant', 'DELTA-3'], ['reasoning', 'SECRET-REASONING-2'], ['user', 'ECHO-4'], ['assistant', 'FOXTROT-5'],
    ];
    for (const [role, text] of script) expect(turn(ctx, lane, role, text).code).toBe(0);
    const cadence = callLog(log).filter((c) => c.mode === 'cadence');
    expect(cadence).toHaveLength(2);
    const words = (prompt: string) => [...prompt.matchAll(/[A-Z]+-\d/g)].map((m) => m[0]);
    expect(words(cadence[0]!.prompt)).toEqual(['ALPHA-0', 'BRAVO-1', 'CHARLIE-2']);
    expect(words(cadence[1]!.prompt)).toEqual(['DELTA-3', 'ECHO-4', 'FOXTROT-5']);
    // Reasoning is stored nowhere: not in a prompt, not in the store's file.
    const finished = qa(ctx, ['finish', '--lane', lane]);
    expect(finished.code).toBe(0);
    for (const call of callLog(log)) expect(call.prompt).not.toContain('SECRET');
    expect(readFileSync(join(ctx.state, 'data.mdb')).includes('SECRET-REASONING')).toBe(false);
    expect(statusOf(ctx, lane)).toMatchObject({ turns: 6, reasoningTurns: 2, lastSent: 6, unsent: 0 });
  });

  test('should store the observer frames of each call labelled by mode', () => {
    const { lane } = fresh();
    expect(start(ctx, lane, 'pass').code).toBe(0);
    for (let i = 0; i < 3; i++) turn(ctx, lane, 'user', `t${i}`);
    expect(qa(ctx, ['finish', '--lane', lane]).code).toBe(0);
    // pass.mjs streams two thinking frames and one tool per call.
    expect(statusOf(ctx, lane).frames).toEqual({ bootstrap: 3, cadence: 3, 'cross-check': 3 });
  });

  test('should carry the guidance of a failing cadence verdict', () => {
    const { lane } = fresh();
    expect(start(ctx, lane, 'fail').code).toBe(0);
    const outs = [0, 1, 2].map((i) => turn(ctx, lane, 'assistant', `t${i}`));
    expect(outs.map((o) => o.code)).toEqual([0, 0, 0]);
    expect(linesOf(outs[2]!, 'QA_UPDATE:')).toEqual([
      `QA_UPDATE: lane=${lane} call=2 turns=0-3 verdict=fail note="cadence found a problem" guidance="Observer guidance: rerun the tests before cadence"`,
    ]);
  });
});

describe('qa turn: review requests', () => {
  test('should request a review after each diff-bearing turn by default', () => {
    const { lane } = fresh();
    expect(start(ctx, lane, 'pass').code).toBe(0);
    const plain = turn(ctx, lane, 'user', 'no diff');
    const diff = turn(ctx, lane, 'assistant', 'a diff', { diff: true });
    expect(linesOf(plain, 'QA_REVIEW_REQUEST:')).toEqual([]);
    expect(linesOf(diff, 'QA_REVIEW_REQUEST:')).toEqual([
      `QA_REVIEW_REQUEST: lane=${lane} reason=cooldown turns=1 summary="1 diff-bearing turn(s) since the last review request: 1"`,
    ]);
  });

  test('should wait LANEWARD_QA_REVIEW_COOLDOWN_TURNS diff-bearing turns, not counting the others', () => {
    const { lane } = fresh();
    expect(start(ctx, lane, 'pass').code).toBe(0);
    const env = { LANEWARD_QA_REVIEW_COOLDOWN_TURNS: '2', LANEWARD_QA_CADENCE: '100' };
    const outs = [
      turn(ctx, lane, 'assistant', 'd0', { diff: true, env }),
      turn(ctx, lane, 'user', 'plain', { env }),
      turn(ctx, lane, 'assistant', 'd2', { diff: true, env }),
      turn(ctx, lane, 'assistant', 'd3', { diff: true, env }),
    ];
    expect(outs.map((o) => linesOf(o, 'QA_REVIEW_REQUEST:').map((l) => field(l, 'turns')))).toEqual([[], [], ['0,2'], []]);
    // One diff left unreviewed: a stop sends the final request.
    const stopped = qa(ctx, ['stop', '--lane', lane]);
    expect(stopped.code).toBe(0);
    expect(prefixes(stopped)).toEqual(['QA_REVIEW_REQUEST:', 'QA_CLEARED:']);
    expect(field(linesOf(stopped, 'QA_REVIEW_REQUEST:')[0]!, 'reason')).toBe('final');
    expect(field(linesOf(stopped, 'QA_REVIEW_REQUEST:')[0]!, 'turns')).toBe('3');
  });
});

describe('qa finish: the cross-check', () => {
  test('should reuse the transcript from the bootstrap length with the full tool policy, and let a pass through', () => {
    const { lane, log } = fresh();
    expect(start(ctx, lane, 'pass', ['--log', log]).code).toBe(0);
    for (let i = 0; i < 4; i++) turn(ctx, lane, 'user', `TURN-${i}`);
    const finished = qa(ctx, ['finish', '--lane', lane]);
    expect(finished.code).toBe(0);
    expect(linesOf(finished, 'QA_CROSS_CHECK:')).toEqual([
      `QA_CROSS_CHECK: lane=${lane} call=3 verdict=pass code=- from=1 completion=allowed note="cross-check ok (call 3)" guidance=-`,
    ]);
    const cross = callLog(log).find((c) => c.mode === 'cross-check')!;
    expect(cross.tools).toEqual(['read', 'search', 'shell', 'write', 'other']);
    // The transcript since bootstrap: the cadence exchange, not the bootstrap one; then the unsent turn.
    expect(cross.prompt).toContain('Observer transcript since bootstrap (1 exchanges)');
    expect(cross.prompt).toContain('- call 2 (cadence) turns 0-3: pass');
    expect(cross.prompt).not.toContain('(bootstrap)');
    expect([...cross.prompt.matchAll(/TURN-\d/g)].map((m) => m[0])).toEqual(['TURN-3']);
    expect(statusOf(ctx, lane)).toMatchObject({ state: 'complete' });
    const late = turn(ctx, lane, 'user', 'after completion');
    expect(late.code).toBe(3);
    expect(codesOf(late.stderr)).toEqual(['QA_LANE_CLOSED']);
  });

  test('should abort completion with the guidance of a failed cross-check (exit 3)', () => {
    const { lane } = fresh();
    expect(start(ctx, lane, 'fail').code).toBe(0);
    const finished = qa(ctx, ['finish', '--lane', lane]);
    expect(finished.code).toBe(3);
    expect(codesOf(finished.stderr)).toEqual(['QA_CROSS_CHECK_FAILED']);
    expect(finished.stderr).toContain('Observer guidance: rerun the tests before cross-check');
    const line = linesOf(finished, 'QA_CROSS_CHECK:')[0]!;
    expect([field(line, 'verdict'), field(line, 'code'), field(line, 'completion')]).toEqual(['fail', 'QA_CROSS_CHECK_FAILED', 'aborted']);
    expect(statusOf(ctx, lane)).toMatchObject({ state: 'active', ready: true });
  });

  test.each([
    ['no lane at all', 'QA_NO_OBSERVER'],
    ['a stopped lane', 'QA_NO_OBSERVER'],
    ['a lane whose bootstrap failed', 'QA_NOT_BOOTSTRAPPED'],
    ['a lane reset into a failing bootstrap', 'QA_NOT_BOOTSTRAPPED'],
  ])('should never skip the cross-check: %s refuses completion with %s', (kind, code) => {
    const { lane, log } = fresh();
    const modes = writeText(join(root, `${lane}-modes`), kind === 'a lane whose bootstrap failed' ? 'bootstrap' : 'none');
    if (kind !== 'no lane at all') {
      const started = start(ctx, lane, 'fail', ['--fail-modes-file', modes, '--log', log]);
      expect(started.code).toBe(kind === 'a lane whose bootstrap failed' ? 3 : 0);
    }
    if (kind === 'a stopped lane') expect(qa(ctx, ['stop', '--lane', lane]).code).toBe(0);
    writeText(modes, 'bootstrap');
    if (kind === 'a lane reset into a failing bootstrap') {
      expect(qa(ctx, ['reset', '--lane', lane]).code).toBe(3);
      turn(ctx, lane, 'user', 'more work');
    }
    const finished = qa(ctx, ['finish', '--lane', lane]);
    expect(finished.code).toBe(3);
    expect(codesOf(finished.stderr)).toEqual([code]);
    expect(linesOf(finished, 'QA_COMPLETION_REFUSED:')).toEqual([`QA_COMPLETION_REFUSED: lane=${lane} code=${code} completion=aborted`]);
    expect(callLog(log).filter((c) => c.mode === 'cross-check')).toEqual([]);
  });
});

describe('qa stop and qa reset', () => {
  test('should clear the history and readiness on stop, and take no turns until started again', () => {
    const { lane } = fresh();
    expect(start(ctx, lane, 'pass').code).toBe(0);
    for (let i = 0; i < 4; i++) turn(ctx, lane, 'user', `t${i}`);
    const stopped = qa(ctx, ['stop', '--lane', lane]);
    expect(stopped.code).toBe(0);
    expect(linesOf(stopped, 'QA_CLEARED:')).toEqual([`QA_CLEARED: lane=${lane} reason=stop turns=4 exchanges=2 frames=6 ready=no`]);
    expect(statusOf(ctx, lane)).toMatchObject({ state: 'stopped', ready: false, turns: 0, exchanges: 0, lastSent: 0, bootstrapLen: null, frames: { bootstrap: 0, cadence: 0, 'cross-check': 0 } });
    const late = turn(ctx, lane, 'user', 'after stop');
    expect(late.code).toBe(3);
    expect(codesOf(late.stderr)).toEqual(['QA_LANE_CLOSED']);
    expect(start(ctx, lane, 'pass').code).toBe(0);
    expect(statusOf(ctx, lane)).toMatchObject({ state: 'active', ready: true, turns: 0 });
  });

  test('should re-bootstrap on reset before cadence resumes, with the delta starting over', () => {
    const { lane, log } = fresh();
    expect(start(ctx, lane, 'pass', ['--log', log]).code).toBe(0);
    for (let i = 0; i < 2; i++) turn(ctx, lane, 'user', `OLD-${i}`);
    const reset = qa(ctx, ['reset', '--lane', lane]);
    expect(reset.code).toBe(0);
    expect(prefixes(reset)).toEqual(['QA_CLEARED:', 'QA_OBSERVER_READY:']);
    expect(field(linesOf(reset, 'QA_CLEARED:')[0]!, 'reason')).toBe('reset');
    const outs = [0, 1, 2].map((i) => turn(ctx, lane, 'user', `NEW-${i}`));
    expect(linesOf(outs[2]!, 'QA_UPDATE:').map((l) => field(l, 'turns'))).toEqual(['0-3']);
    const calls = callLog(log);
    expect(calls.map((c) => c.mode)).toEqual(['bootstrap', 'bootstrap', 'cadence']);
    expect([...calls[2]!.prompt.matchAll(/[A-Z]+-\d/g)].map((m) => m[0])).toEqual(['NEW-0', 'NEW-1', 'NEW-2']);
  });
});

describe('qa: output and usage', () => {
  test('should print one JSON object with --json', () => {
    const { lane } = fresh();
    const started = qa(ctx, ['start', '--lane', lane, '--observer', `node ${join(root, '..')}/nothing.mjs`, '--actions', ctx.actions.file, '--trust', ctx.actions.trust, '--action', 'observe', '--json']);
    const parsed = JSON.parse(started.stdout) as { ok: boolean; code: string; events: { type: string; code?: string }[] };
    expect(started.stdout.trim().split('\n')).toHaveLength(1);
    expect(parsed.ok).toBe(false);
    expect(parsed.code).toBe('CHILD_FAILED');
    expect(parsed.events.map((e) => [e.type, e.code])).toEqual([['started', undefined], ['observer_failed', 'CHILD_FAILED']]);
    const status = qa(ctx, ['status', '--lane', lane, '--json']);
    expect(JSON.parse(status.stdout)).toMatchObject({ ok: true, lane, code: null, status: { ready: false, calls: 1 } });
  });

  test.each([
    [['turn', '--lane', 'bad/lane', '--role', 'user', '--text', 'x']],
    [['turn', '--lane', 'l', '--role', 'reasoning', '--text', 'x', '--diff']],
    [['turn', '--lane', 'l', '--role', 'boss', '--text', 'x']],
    [['turn', '--lane', 'l', '--role', 'user']],
    [['status']],
    [['start', '--lane', 'l', '--observer', '   ', '--actions', 'a', '--trust', 't', '--action', 'x']],
  ])('should refuse %j as a usage error (exit 2)', (args) => {
    const out = qa(ctx, args);
    expect(out.code).toBe(2);
    expect(codesOf(out.stderr)).toEqual(['USAGE']);
  });

  test('should refuse a bad LANEWARD_QA_CADENCE as a usage error', () => {
    const { lane } = fresh();
    expect(start(ctx, lane, 'pass').code).toBe(0);
    const out = turn(ctx, lane, 'user', 'x', { env: { LANEWARD_QA_CADENCE: '0' } });
    expect(out.code).toBe(2);
    expect(codesOf(out.stderr)).toEqual(['USAGE']);
    expect(statusOf(ctx, lane)).toMatchObject({ turns: 0 });
  });
});
