import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { LaneRecord } from '../formats/qa/record.ts';
import { openStore, readLaneJournal, type Store } from '../main/store/store.ts';
import { BUNDLE, ensureBuilt } from './helpers/cli.ts';
import { prng } from './helpers/prng.ts';
import { killAt, ownDescriptorUnder, watchOpen, type Watched } from './helpers/kill-aim.ts';
import { killQuietly, settleTagged, taggedPids } from './helpers/procs.ts';
import { callLog, OBSERVERS, qa, qaCtx, start, statusOf, turn, type QaCtx } from './helpers/qa.ts';
import { tempRoot } from './helpers/tmp.ts';

// SIGKILLs `qa turn` at random instants (some while its cadence check runs the observer)
// and shows the lane always holds the old state or the new one: the record and its
// journal agree, turns are contiguous and never duplicated, the delta never overlaps.
// LANEWARD_CRASH_SEED replays a failure.

const SEED = Number(process.env['LANEWARD_CRASH_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
const TRIALS = Number(process.env['LANEWARD_QA_CRASH_TRIALS'] ?? 30);

const root = tempRoot('qa-crash');
let ctx: QaCtx;
let store: Store;
beforeAll(() => {
  ensureBuilt();
  ctx = qaCtx(root);
});
afterAll(async () => {
  expect(await settleTagged(ctx.tag, 5_000)).toEqual([]);
});

/**
 * What the next command on the lane reads: taken under the writer lock. A writer killed
 * after writing its meta page and before publishing its transaction id leaves a durable
 * commit that plain readers see only once the next writer takes the lock (docs/store.md,
 * a known LMDB limit); a read outside the lock could count that commit one trial late.
 */
function committed(lane: string): { record: LaneRecord; journal: ReturnType<typeof readLaneJournal> } {
  return store.lanes.transactionSync(() => ({ record: store.lanes.get(lane)!, journal: readLaneJournal(store, lane) }));
}

/** Every invariant of a lane that was never cleared. */
function check(lane: string, where: string): LaneRecord {
  const { record, journal } = committed(lane);
  expect(record.seq, where).toBe(journal.length);
  expect(record.turns.map((t) => t.index), where).toEqual(record.turns.map((_, i) => i));
  // Unsent turns keep their text, each once; sent ones dropped it.
  const texts = record.turns.slice(record.lastSent).map((t) => t.text);
  expect(texts.every((t) => t !== null) && new Set(texts).size === texts.length, where).toBe(true);
  const turnEvents = journal.filter((e) => e.type === 'turn');
  expect(turnEvents.filter((e) => e.index !== null).map((e) => e.index), where).toEqual(record.turns.map((t) => t.index));
  expect(turnEvents.filter((e) => e.role === 'reasoning').length, where).toBe(record.reasoningTurns);
  expect(record.lastSent, where).toBeLessThanOrEqual(record.turns.length);
  // Deltas sent to the observer never overlap: in the order they were reserved, each starts
  // where the last one ended, or later. (The transcript is in the order calls finished,
  // which concurrent commands may swap.)
  let sentTo = 0;
  for (const exchange of record.transcript.filter((x) => x.mode === 'cadence').sort((a, b) => a.from - b.from)) {
    expect(exchange.from, where).toBeGreaterThanOrEqual(sentTo);
    sentTo = exchange.to;
  }
  return record;
}

describe('qa turn killed at random instants', () => {
  test(`keeps the lane's old state or its new one (seed ${SEED})`, { timeout: 600_000 }, async () => {
    const lane = 'crash-1';
    const log = join(root, 'crash-1.jsonl');
    expect(start(ctx, lane, 'pass', ['--log', log]).code).toBe(0);
    // The user and assistant turns the lane recorded, by their text.
    const recorded: string[] = [];
    store = openStore(ctx.state);
    const random = prng(SEED);
    const [name, value] = ctx.tag.split('=') as [string, string];
    const env = { ...process.env, [name]: value, LANEWARD_QA_CADENCE: '2', LANEWARD_QA_REVIEW_COOLDOWN_TURNS: '2' };
    const tally = { before: 0, after: 0 };
    // Calibration on unkilled turns, as the machine is now: when a turn opens its store and
    // when it ends. A fifth of the kills land over 0..1.3x a whole turn from the spawn; the
    // rest at a random point of what followed the store's opening (with a fifth to spare),
    // counted from when the killed turn opened it, so node's start, which varies under load
    // by more than the turn's work, does not move them.
    const watched: Watched[] = [];
    for (let i = 0; i < 3; i++) {
      const child = spawn(process.execPath, [BUNDLE, 'qa', 'turn', '--lane', lane, '--role', 'user', '--text', `WARMUP-${i}`, '--state', ctx.state], { stdio: 'ignore', env: { ...env, LANEWARD_QA_CADENCE: '2' } });
      const { ran, ...seen } = await watchOpen(child, ctx.state, new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code))));
      expect(ran).toBe(0);
      watched.push(seen);
    }
    const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const span = 1.3 * median(watched.map((w) => w.took));
    const opened = watched.map((w) => w.opened).filter((o) => o !== undefined);
    const work = opened.length === 0 ? undefined : 1.2 * median(watched.filter((w) => w.opened !== undefined).map((w) => w.took - w.opened!));
    // Both sides of the commit must be hit: while one is not, trials go on (up to twice as many).
    for (let i = 0; i < TRIALS || ((tally.before === 0 || tally.after === 0) && i < 2 * TRIALS); i++) {
      const where = `seed=${SEED} trial=${i}; replay with LANEWARD_CRASH_SEED=${SEED}`;
      const before = check(lane, where);
      const role = ['user', 'assistant', 'reasoning'][Math.floor(random() * 3)]!;
      const args = ['qa', 'turn', '--lane', lane, '--role', role, '--text', `TURN-${i}`, '--state', ctx.state, ...(role !== 'reasoning' && random() < 0.5 ? ['--diff'] : [])];
      const child = spawn(process.execPath, [BUNDLE, ...args], { stdio: 'ignore', env });
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      const fromSpawn = work === undefined || random() < 1 / 5;
      const kill = killAt(child, fromSpawn ? { delay: random() * span } : { delay: random() * work, anchor: ownDescriptorUnder(child.pid!, ctx.state) });
      await exited;
      kill.stop();
      // An observer the killed command started ends by itself (it is a short fixture).
      expect(await settleTagged(ctx.tag, 5_000), where).toEqual([]);
      const after = check(lane, where);
      const grew = after.turns.length + after.reasoningTurns - (before.turns.length + before.reasoningTurns);
      expect([0, 1], where).toContain(grew);
      if (grew === 1) tally.after++;
      else tally.before++;
      if (grew === 1 && role !== 'reasoning') recorded.push(`TURN-${i}`);
    }
    process.stdout.write(`qa-crash: seed=${SEED} trials=${TRIALS}+ span_ms=${Math.round(span)} work_ms=${work === undefined ? 'unseen' : Math.round(work)} killed_before_commit=${tally.before} committed=${tally.after}\n`);
    // Both sides of the commit were hit, and the lane still works after every kill.
    expect(tally.before).toBeGreaterThan(0);
    expect(tally.after).toBeGreaterThan(0);
    expect(turn(ctx, lane, 'user', 'after the kills').code).toBe(0);
    expect(qa(ctx, ['finish', '--lane', lane]).code).toBe(0);
    expect(statusOf(ctx, lane)).toMatchObject({ state: 'complete', unsent: 0 });
    const record = check(lane, 'after finish');
    // No turn passed unjudged: each was in the prompt of a call whose verdict the lane recorded.
    const judged = new Set(record.transcript.filter((x) => x.verdict !== 'error').map((x) => String(x.call)));
    const prompts = callLog(log).filter((c) => judged.has(c.call)).map((c) => c.prompt);
    expect(recorded.filter((text) => !prompts.some((p) => p.includes(`)\n${text}\n`))), `seed=${SEED}`).toEqual([]);
  });
});

describe('qa turn run concurrently on one lane', () => {
  test('never sends a turn to the observer twice', { timeout: 120_000 }, async () => {
    const lane = 'concurrent-1';
    const log = join(root, 'concurrent.jsonl');
    expect(start(ctx, lane, 'pass', ['--log', log, '--delay-ms', '150']).code).toBe(0);
    store = openStore(ctx.state);
    const [name, value] = ctx.tag.split('=') as [string, string];
    const env = { ...process.env, [name]: value, LANEWARD_QA_CADENCE: '2' };
    const runs = Array.from({ length: 8 }, (_, i) => {
      const child = spawn(process.execPath, [BUNDLE, 'qa', 'turn', '--lane', lane, '--role', 'user', '--text', `CONC-${i}`, '--state', ctx.state], { stdio: 'ignore', env });
      return new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    });
    expect(await Promise.all(runs)).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    const sent = callLog(log)
      .filter((c) => c.mode === 'cadence')
      .flatMap((c) => [...c.prompt.matchAll(/CONC-\d/g)].map((m) => m[0]));
    expect(sent.length).toBeGreaterThan(0);
    expect(new Set(sent).size).toBe(sent.length);
    check(lane, 'after concurrent turns');
  });
});

describe('an observer call whose command was killed', () => {
  const tagEnv = () => {
    const [name, value] = ctx.tag.split('=') as [string, string];
    return { [name]: value, LANEWARD_QA_CADENCE: '2' };
  };

  /**
   * Starts `qa <args>` whose observer call `call` is slow, waits until that observer has
   * read its prompt (its log line), then SIGKILLs the command and the observer it left.
   */
  async function killMidObserver(lane: string, log: string, call: number, args: readonly string[]): Promise<void> {
    const child = spawn(process.execPath, [BUNDLE, 'qa', ...args, '--lane', lane, '--state', ctx.state], { stdio: 'ignore', env: { ...process.env, ...tagEnv() } });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const end = Date.now() + 60_000;
    while (!callLog(log).some((c) => c.call === String(call))) {
      expect(Date.now(), `call ${call} never reached its observer`).toBeLessThan(end);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    child.kill('SIGKILL');
    await exited;
    // The observer outlives the killed command; it is this test's to end.
    for (const pid of taggedPids(ctx.tag)) killQuietly(pid);
    expect(await settleTagged(ctx.tag, 10_000)).toEqual([]);
  }

  const turnHeading = (index: number, role: string, diff: boolean, text: string) => `### turn ${index} (${role}${diff ? ', carries a diff' : ''})\n${text}\n`;

  test('qa turn killed mid-observer: the cross-check prompt holds its turns, and only its pass completes the lane', { timeout: 120_000 }, async () => {
    const lane = 'killed-cadence-1';
    const log = join(root, `${lane}.jsonl`);
    // Call 1 is the bootstrap, call 2 the cadence check that is killed, call 3 the cross-check.
    expect(start(ctx, lane, 'pass', ['--log', log, '--slow-call', '2']).code).toBe(0);
    expect(turn(ctx, lane, 'user', 'FIRST-TURN', { env: tagEnv() }).code).toBe(0);
    await killMidObserver(lane, log, 2, ['turn', '--role', 'assistant', '--text', 'DIFF-TURN', '--diff']);
    expect(callLog(log).find((c) => c.call === '2')!.prompt).toContain(turnHeading(1, 'assistant', true, 'DIFF-TURN'));
    const finished = qa(ctx, ['finish', '--lane', lane], tagEnv());
    expect(finished.stdout).toMatch(/^QA_CROSS_CHECK: lane=killed-cadence-1 call=3 verdict=pass /m);
    expect(finished.code).toBe(0);
    const cross = callLog(log).filter((c) => c.mode === 'cross-check');
    expect(cross.map((c) => c.call)).toEqual(['3']);
    expect(cross[0]!.prompt).toContain(turnHeading(0, 'user', false, 'FIRST-TURN'));
    expect(cross[0]!.prompt).toContain(turnHeading(1, 'assistant', true, 'DIFF-TURN'));
    expect(statusOf(ctx, lane)).toMatchObject({ state: 'complete', turns: 2, lastSent: 2, unsent: 0 });
  });

  test('qa turn killed mid-observer: the next cadence window sends its turns again, with the new ones', { timeout: 120_000 }, async () => {
    const lane = 'killed-cadence-2';
    const log = join(root, `${lane}.jsonl`);
    expect(start(ctx, lane, 'pass', ['--log', log, '--slow-call', '2']).code).toBe(0);
    expect(turn(ctx, lane, 'user', 'T0', { env: tagEnv() }).code).toBe(0);
    await killMidObserver(lane, log, 2, ['turn', '--role', 'assistant', '--text', 'T1', '--diff']);
    // Its observer was killed too, its stream cut short: the call is lost, and said so.
    const next = turn(ctx, lane, 'user', 'T2', { env: tagEnv() });
    expect(next.stdout).toMatch(/^QA_OBSERVER_FAILED: lane=killed-cadence-2 mode=cadence call=2 code=EXECUTION_UNKNOWN /m);
    expect(next.code).toBe(0);
    const closing = turn(ctx, lane, 'assistant', 'T3', { env: tagEnv() });
    expect(closing.code).toBe(0);
    expect(closing.stdout).toMatch(/^QA_UPDATE: lane=killed-cadence-2 call=3 turns=0-4 verdict=pass /m);
    const prompt = callLog(log).find((c) => c.call === '3')!.prompt;
    expect(prompt).toContain('## New turns (4)');
    for (const [i, text] of ['T0', 'T1', 'T2', 'T3'].entries()) expect(prompt).toContain(turnHeading(i, i % 2 === 0 ? 'user' : 'assistant', i === 1, text));
    // Judged once now: the cross-check is given no turn again.
    expect(qa(ctx, ['finish', '--lane', lane], tagEnv()).code).toBe(0);
    expect(callLog(log).find((c) => c.mode === 'cross-check')!.prompt).not.toContain('## New turns');
  });

  test('qa finish killed mid-cross-check: the next finish is given the same turns, and completes', { timeout: 120_000 }, async () => {
    const lane = 'killed-cross-1';
    const log = join(root, `${lane}.jsonl`);
    // Call 2 is the first cross-check (no cadence window closes with one turn).
    expect(start(ctx, lane, 'pass', ['--log', log, '--slow-call', '2']).code).toBe(0);
    expect(turn(ctx, lane, 'assistant', 'ONLY-TURN', { diff: true, env: tagEnv() }).code).toBe(0);
    await killMidObserver(lane, log, 2, ['finish']);
    const finished = qa(ctx, ['finish', '--lane', lane], tagEnv());
    expect(finished.stdout).toMatch(/^QA_CROSS_CHECK: lane=killed-cross-1 call=3 verdict=pass /m);
    expect(finished.code).toBe(0);
    expect(callLog(log).find((c) => c.call === '3')!.prompt).toContain(turnHeading(0, 'assistant', true, 'ONLY-TURN'));
  });
});

describe('an observer call whose command was killed while its observer carried on', () => {
  const tagEnv = () => {
    const [name, value] = ctx.tag.split('=') as [string, string];
    return { [name]: value, LANEWARD_QA_CADENCE: '2' };
  };

  /** Starts `qa <args>`, waits until observer call `call` read its prompt, then SIGKILLs the command alone: its observer runs on. */
  async function killCommandOnly(lane: string, log: string, call: number, args: readonly string[]): Promise<void> {
    const child = spawn(process.execPath, [BUNDLE, 'qa', ...args, '--lane', lane, '--state', ctx.state], { stdio: 'ignore', env: { ...process.env, ...tagEnv() } });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const end = Date.now() + 60_000;
    while (!callLog(log).some((c) => c.call === String(call))) {
      expect(Date.now(), `call ${call} never reached its observer`).toBeLessThan(end);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    child.kill('SIGKILL');
    await exited;
    expect(taggedPids(ctx.tag).length, 'the observer outlives its command').toBeGreaterThan(0);
  }

  test.each(['adopted while it runs', 'read after it ended'] as const)('qa turn killed mid-observer, its observer %s: its delta is judged once, by that call', { timeout: 120_000 }, async (how) => {
    const lane = how === 'adopted while it runs' ? 'orphan-cadence-1' : 'orphan-cadence-2';
    const log = join(root, `${lane}.jsonl`);
    // Call 1 is the bootstrap, call 2 the cadence check whose command is killed, call 3 the cross-check.
    expect(start(ctx, lane, 'pass', ['--log', log, '--slow-call', '2', '--slow-ms', '700']).code).toBe(0);
    expect(turn(ctx, lane, 'user', 'FIRST-TURN', { env: tagEnv() }).code).toBe(0);
    await killCommandOnly(lane, log, 2, ['turn', '--role', 'assistant', '--text', 'DIFF-TURN', '--diff']);
    if (how === 'read after it ended') expect(await settleTagged(ctx.tag, 30_000)).toEqual([]);
    const finished = qa(ctx, ['finish', '--lane', lane], tagEnv());
    // The killed command's call is recorded by the next one, with its verdict on both turns.
    expect(finished.stdout).toMatch(/^QA_UPDATE: lane=orphan-cadence-\d call=2 turns=0-2 verdict=pass /m);
    expect(finished.stdout).toMatch(/^QA_CROSS_CHECK: lane=orphan-cadence-\d call=3 verdict=pass /m);
    expect(finished.code).toBe(0);
    // Each turn reached the observer once: the cross-check is given none again.
    expect(callLog(log).map((c) => c.call)).toEqual(['1', '2', '3']);
    expect(callLog(log).find((c) => c.call === '3')!.prompt).not.toContain('## New turns');
    expect(statusOf(ctx, lane)).toMatchObject({ state: 'complete', turns: 2, lastSent: 2, unsent: 0 });
    expect(await settleTagged(ctx.tag, 10_000)).toEqual([]);
  });

  test('qa start killed mid-bootstrap, its observer left running: the next start adopts it and is ready, the bootstrap sent once', { timeout: 120_000 }, async () => {
    const lane = 'orphan-bootstrap-1';
    const log = join(root, `${lane}.jsonl`);
    const template = ['node', `${OBSERVERS}/pass.mjs`, '{prompt}', '{result}', '--log', log, '--slow-call', '1', '--slow-ms', '700'].join(' ');
    const args = ['start', '--lane', lane, '--observer', template, '--actions', ctx.actions.file, '--trust', ctx.actions.trust, '--action', 'observe', '--timeout-ms', '20000', '--state', ctx.state];
    const child = spawn(process.execPath, [BUNDLE, 'qa', ...args], { stdio: 'ignore', env: { ...process.env, ...tagEnv() } });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const end = Date.now() + 60_000;
    while (!callLog(log).some((c) => c.call === '1')) {
      expect(Date.now(), 'the bootstrap never reached its observer').toBeLessThan(end);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    child.kill('SIGKILL');
    await exited;
    expect(taggedPids(ctx.tag).length).toBeGreaterThan(0);
    const again = start(ctx, lane, 'pass', ['--log', log]);
    expect(again.stdout).toMatch(/^QA_OBSERVER_READY: lane=orphan-bootstrap-1 call=1 /m);
    expect(again.code).toBe(0);
    expect(callLog(log).map((c) => `${c.mode} ${c.call}`)).toEqual(['bootstrap 1']);
    expect(statusOf(ctx, lane)).toMatchObject({ state: 'active', ready: true, calls: 1 });
    expect(await settleTagged(ctx.tag, 10_000)).toEqual([]);
  });

  test('qa finish killed mid-cross-check, its observer left running: the next finish adopts it and completes, the cross-check sent once', { timeout: 120_000 }, async () => {
    const lane = 'orphan-cross-1';
    const log = join(root, `${lane}.jsonl`);
    expect(start(ctx, lane, 'pass', ['--log', log, '--slow-call', '2', '--slow-ms', '700']).code).toBe(0);
    expect(turn(ctx, lane, 'assistant', 'ONLY-TURN', { diff: true, env: tagEnv() }).code).toBe(0);
    await killCommandOnly(lane, log, 2, ['finish']);
    const finished = qa(ctx, ['finish', '--lane', lane], tagEnv());
    expect(finished.stdout).toMatch(/^QA_CROSS_CHECK: lane=orphan-cross-1 call=2 verdict=pass /m);
    expect(finished.code).toBe(0);
    expect(callLog(log).map((c) => `${c.mode} ${c.call}`)).toEqual(['bootstrap 1', 'cross-check 2']);
    expect(statusOf(ctx, lane)).toMatchObject({ state: 'complete', calls: 2, unsent: 0 });
    expect(await settleTagged(ctx.tag, 10_000)).toEqual([]);
  });

  test('qa finish killed mid-cross-check, its observer failing on: the next finish reports that failure, nothing sent again', { timeout: 120_000 }, async () => {
    const lane = 'orphan-cross-2';
    const log = join(root, `${lane}.jsonl`);
    expect(start(ctx, lane, 'fail', ['--log', log, '--fail-modes', 'cross-check', '--slow-call', '2', '--slow-ms', '700']).code).toBe(0);
    expect(turn(ctx, lane, 'assistant', 'ONLY-TURN', { diff: true, env: tagEnv() }).code).toBe(0);
    await killCommandOnly(lane, log, 2, ['finish']);
    const finished = qa(ctx, ['finish', '--lane', lane], tagEnv());
    expect(finished.stdout).toMatch(/^QA_CROSS_CHECK: lane=orphan-cross-2 call=2 verdict=fail /m);
    expect(finished.stderr).toMatch(/\(QA_CROSS_CHECK_FAILED\)$/m);
    expect(finished.code).toBe(3);
    expect(callLog(log).map((c) => `${c.mode} ${c.call}`)).toEqual(['bootstrap 1', 'cross-check 2']);
    expect(statusOf(ctx, lane)).toMatchObject({ state: 'active', calls: 2, unsent: 0 });
    expect(await settleTagged(ctx.tag, 10_000)).toEqual([]);
  });

  test('qa start killed mid-bootstrap, its observer failing on: the next start reports that failure, the bootstrap sent once', { timeout: 120_000 }, async () => {
    const lane = 'orphan-bootstrap-2';
    const log = join(root, `${lane}.jsonl`);
    const template = ['node', `${OBSERVERS}/fail.mjs`, '{prompt}', '{result}', '--log', log, '--fail-modes', 'bootstrap', '--slow-call', '1', '--slow-ms', '700'].join(' ');
    const args = ['start', '--lane', lane, '--observer', template, '--actions', ctx.actions.file, '--trust', ctx.actions.trust, '--action', 'observe', '--timeout-ms', '20000', '--state', ctx.state];
    const child = spawn(process.execPath, [BUNDLE, 'qa', ...args], { stdio: 'ignore', env: { ...process.env, ...tagEnv() } });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const end = Date.now() + 60_000;
    while (!callLog(log).some((c) => c.call === '1')) {
      expect(Date.now(), 'the bootstrap never reached its observer').toBeLessThan(end);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    child.kill('SIGKILL');
    await exited;
    expect(taggedPids(ctx.tag).length).toBeGreaterThan(0);
    const again = start(ctx, lane, 'fail', ['--log', log, '--fail-modes', 'bootstrap']);
    expect(again.stdout).toMatch(/^QA_OBSERVER_FAILED: lane=orphan-bootstrap-2 mode=bootstrap call=1 code=QA_BOOTSTRAP_FAILED /m);
    expect(again.code).toBe(3);
    expect(callLog(log).map((c) => `${c.mode} ${c.call}`)).toEqual(['bootstrap 1']);
    expect(statusOf(ctx, lane)).toMatchObject({ state: 'active', ready: false, calls: 1 });
    expect(await settleTagged(ctx.tag, 10_000)).toEqual([]);
  });
});
