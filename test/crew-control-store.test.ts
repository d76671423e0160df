import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { controlRefusal, type ControlAction, type ControlFacts } from '../formats/crew/control.ts';
import { newLane, OWNER_PENDING, type LaneProgress, type LaneStage } from '../formats/crew/record.ts';
import { CrewControl, type ControlTaken } from '../main/crew/crew-control-apply.ts';
import { readControl, requestControl, settleControl } from '../main/crew/crew-control.ts';
import { CrewStop } from '../main/crew/crew-stop.ts';
import { LaneCancels } from '../main/crew/lane-cancels.ts';
import { loadCrew, type LoadedCrew } from '../main/crew/load-crew.ts';
import { writeDemoCrew } from '../main/demo/demo-crew.ts';
import { thisHolder } from '../main/process/holder-claim.ts';
import { openStore, type Store } from '../main/store/store.ts';
import { codesOf, ensureBuilt, laneward, ROOT } from './helpers/cli.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('crew-control-store');
let serial = 0;

/** A fresh crew of two lanes on its own state root, nothing run. */
function crew(): { loaded: LoadedCrew; store: Store; dir: string; file: string; state: string; name: string } {
  const dir = join(root, `c${++serial}`);
  const file = writeDemoCrew({ dir, crew: `k${serial}`, lanes: 2, broken: 0, concurrency: 2, fixtures: join(ROOT, 'fixtures') });
  const state = join(dir, 'state');
  return { loaded: loadCrew(file, dir), store: openStore(state), dir, file, state, name: `k${serial}` };
}

const lane = (stage: LaneStage, extra: Partial<LaneProgress> = {}): LaneProgress => ({ ...newLane('k', 'lane-1', '/r', '2026-01-01T00:00:00.000Z'), stage, ...extra });

describe('controlRefusal', () => {
  const running = { running: true, laneControl: true, known: true };
  const idle = { running: false, laneControl: false, known: true };
  test.each<[string, string | null, ControlAction, ControlFacts]>([
    ['stop, crew running', null, 'stop', { ...running, progress: undefined }],
    ['stop, no crew', 'CREW_NOT_RUNNING', 'stop', { ...idle, progress: undefined }],
    ['stop, queued crew', null, 'stop', { ...running, laneControl: false, progress: undefined }],
    ['retry, lane unknown', 'LANE_UNKNOWN', 'retry', { ...running, known: false, progress: undefined }],
    ['retry, queued crew', 'CREW_CONTROL_UNSUPPORTED', 'retry', { ...running, laneControl: false, progress: lane('failed') }],
    ['retry, never started', 'LANE_NOT_RETRYABLE', 'retry', { ...running, progress: undefined }],
    ['retry, complete', 'LANE_NOT_RETRYABLE', 'retry', { ...running, progress: lane('complete') }],
    ['retry, running', 'LANE_NOT_RETRYABLE', 'retry', { ...running, progress: lane('work') }],
    ['retry, waiting for its owner', 'LANE_NOT_RETRYABLE', 'retry', { ...running, progress: lane('interrupted', { stoppedIn: 'answer', code: OWNER_PENDING }) }],
    ['retry, failed', null, 'retry', { ...running, progress: lane('failed') }],
    ['retry, interrupted', null, 'retry', { ...running, progress: lane('interrupted', { stoppedIn: 'work', code: 'CANCELLED' }) }],
    ['retry, failed, no crew (kept)', null, 'retry', { ...idle, progress: lane('failed') }],
    ['retry, left mid-work by a crew that died, no crew (kept)', null, 'retry', { ...idle, progress: lane('work') }],
    ['cancel_call, no crew', 'CREW_NOT_RUNNING', 'cancel_call', { ...idle, progress: lane('work') }],
    ['cancel_call, queued', 'CALL_NOT_RUNNING', 'cancel_call', { ...running, progress: lane('queued') }],
    ['cancel_call, failed', 'CALL_NOT_RUNNING', 'cancel_call', { ...running, progress: lane('failed') }],
    ['cancel_call, working', null, 'cancel_call', { ...running, progress: lane('work') }],
    ['cancel_lane, no crew', 'CREW_NOT_RUNNING', 'cancel_lane', { ...idle, progress: lane('work') }],
    ['cancel_lane, complete', 'LANE_NOT_RUNNING', 'cancel_lane', { ...running, progress: lane('complete') }],
    ['cancel_lane, failed', 'LANE_NOT_RUNNING', 'cancel_lane', { ...running, progress: lane('failed') }],
    ['cancel_lane, not started', null, 'cancel_lane', { ...running, progress: undefined }],
    ['cancel_lane, waiting for its owner', null, 'cancel_lane', { ...running, progress: lane('interrupted', { stoppedIn: 'answer', code: OWNER_PENDING }) }],
  ])('should answer %s with %s', (_name, code, action, facts) => {
    expect(controlRefusal(action, facts)?.code ?? null).toBe(code);
  });
});

describe('requestControl', () => {
  test('should refuse typed before recording, record what can apply under the next seq, and take each request once', async () => {
    const c = crew();
    const by = 'human:alice';
    // No crew runs: stop refused, nothing recorded.
    expect(await requestControl(c.store, c.loaded, { action: 'stop', lane: null, by })).toEqual({ status: 'refused', code: 'CREW_NOT_RUNNING', detail: 'no process runs the crew on this state root', seq: null });
    await c.store.crewLanes.put([c.name, 'lane-1'], { ...lane('failed'), crew: c.name });
    expect(await requestControl(c.store, c.loaded, { action: 'retry', lane: 'lane-1', by })).toEqual({ status: 'requested', code: null, detail: null, seq: 1 });
    // A crew run here (this process holds the claim) on queue workers: stop is taken, lane requests are not.
    await c.store.crewDrivers.put(c.name, thisHolder());
    expect(await requestControl(c.store, c.loaded, { action: 'cancel_lane', lane: 'lane-2', by })).toMatchObject({ status: 'refused', code: 'CREW_CONTROL_UNSUPPORTED' });
    expect(await requestControl(c.store, c.loaded, { action: 'stop', lane: null, by })).toMatchObject({ status: 'requested', seq: 2 });
    await c.store.crewDrivers.put(c.name, { ...thisHolder(), laneControl: true });
    expect(await requestControl(c.store, c.loaded, { action: 'cancel_lane', lane: 'lane-2', by })).toMatchObject({ status: 'requested', seq: 3 });
    expect(readControl(c.store, c.name, 3)).toMatchObject({ v: 1, crew: c.name, seq: 3, action: 'cancel_lane', lane: 'lane-2', by, status: 'requested', code: null, doneAt: null });
    // Taken once: the second settle of one request is refused.
    expect(await settleControl(c.store, c.name, 3, { status: 'applied', code: null, detail: null })).toBe(true);
    expect(await settleControl(c.store, c.name, 3, { status: 'refused', code: 'LANE_NOT_RUNNING', detail: 'x' })).toBe(false);
    expect(readControl(c.store, c.name, 3)).toMatchObject({ status: 'applied', code: null });
    // Malformed requests are usage errors.
    await expect(requestControl(c.store, c.loaded, { action: 'stop', lane: 'lane-1', by })).rejects.toMatchObject({ code: 'USAGE' });
    await expect(requestControl(c.store, c.loaded, { action: 'retry', lane: 'lane-1', by: 'alice' })).rejects.toMatchObject({ code: 'USAGE' });
  });
});

describe('CrewControl', () => {
  test('should stop the crew for an operator, refuse lane requests of a runner that takes only stop, and refuse a stop left for a crew that ended', async () => {
    const c = crew();
    const by = 'human:bob';
    await c.store.crewDrivers.put(c.name, thisHolder());
    const stale = await requestControl(c.store, c.loaded, { action: 'stop', lane: null, by });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const claimedAt = new Date().toISOString();
    await c.store.crewDrivers.put(c.name, { ...thisHolder(), laneControl: true });
    const cancel = await requestControl(c.store, c.loaded, { action: 'cancel_lane', lane: 'lane-1', by });
    const stop = await requestControl(c.store, c.loaded, { action: 'stop', lane: null, by });
    const crewStop = new CrewStop(new AbortController().signal, undefined);
    const taken: ControlTaken[] = [];
    const control = new CrewControl({ store: c.store, crew: c.name, claimedAt, stop: crewStop, lanes: undefined, taken: (t) => taken.push(t) });
    await control.sweep();
    expect(taken.map((t) => [t.seq, t.action, t.status, t.code])).toEqual([
      [stale.seq, 'stop', 'refused', 'CREW_NOT_RUNNING'],
      [cancel.seq, 'cancel_lane', 'refused', 'CREW_CONTROL_UNSUPPORTED'],
      [stop.seq, 'stop', 'applied', null],
    ]);
    expect(crewStop.signal.aborted).toBe(true);
    expect(crewStop.stoppedBy).toBe('operator:bob');
    // Nothing is taken twice.
    await control.sweep();
    expect(taken).toHaveLength(3);
    await control.close();
    crewStop.dispose();
  });
});

describe('LaneCancels', () => {
  test('should cancel one lane\'s calls alone, give its next call a fresh signal after a call cancel, and keep a lane cancel until a retry', () => {
    const stop = new AbortController();
    const cancels = new LaneCancels(stop.signal);
    const a1 = cancels.signal('a');
    const b1 = cancels.signal('b');
    cancels.cancelCall('a', 'human:x', 1);
    expect([a1.aborted, b1.aborted, cancels.signal('a').aborted]).toEqual([true, false, false]);
    expect(cancels.mark('a')).toEqual({ kind: 'call', by: 'human:x', seq: 1 });
    cancels.cancelLane('b', 'human:x', 2);
    expect([b1.aborted, cancels.signal('b').aborted]).toEqual([true, true]);
    cancels.retry('b');
    expect([cancels.signal('b').aborted, cancels.mark('b'), cancels.takeRetry('b'), cancels.takeRetry('b')]).toEqual([false, null, true, false]);
    stop.abort('SIGTERM');
    expect(cancels.signal('b').aborted).toBe(true);
  });
});

describe('crew retry|cancel|stop on the command line', () => {
  beforeAll(() => ensureBuilt());

  test('should keep a retry with no crew running, and exit 1 CONTROL_PENDING when --wait runs out', async () => {
    const c = crew();
    await c.store.crewLanes.put([c.name, 'lane-1'], { ...lane('failed'), crew: c.name });
    const kept = laneward(['crew', 'retry', c.file, '--lane', 'lane-1', '--by', 'alice', '--state', c.state], { cwd: c.dir });
    expect([kept.code, kept.stdout.trim()]).toEqual([0, 'CREW_REQUEST: seq=1 action=retry lane=lane-1 by=human:alice status=requested']);
    const waited = laneward(['crew', 'retry', c.file, '--lane', 'lane-1', '--by', 'alice', '--state', c.state, '--wait', '300ms', '--json'], { cwd: c.dir });
    expect(waited.code).toBe(1);
    expect(JSON.parse(waited.stdout)).toEqual({ seq: 2, action: 'retry', lane: 'lane-1', by: 'human:alice', status: 'requested', code: 'CONTROL_PENDING', detail: null });
  });

  let shared: ReturnType<typeof crew> | undefined;
  test.each<[string[], number, string]>([
    [['stop', '--lane', 'lane-1'], 2, 'USAGE'],
    [['retry'], 2, 'USAGE'],
    [['retry', '--lane', 'lane-1', '--call'], 2, 'USAGE'],
    [['cancel', '--lane', 'lane-1', '--by', 'two words'], 2, 'USAGE'],
    [['stop'], 3, 'CREW_NOT_RUNNING'],
    [['cancel', '--lane', 'lane-1', '--call'], 3, 'CREW_NOT_RUNNING'],
    [['retry', '--lane', 'lane-9'], 3, 'LANE_UNKNOWN'],
    [['retry', '--lane', 'lane-2'], 3, 'LANE_NOT_RETRYABLE'],
  ])('should exit crew %j with %i (%s)', (args, exit, code) => {
    const c = (shared ??= crew());
    const [sub, ...rest] = args;
    const run = laneward(['crew', sub!, c.file, ...rest, '--state', c.state, ...(rest.includes('--by') ? [] : ['--by', 'alice'])], { cwd: c.dir });
    expect(run.code).toBe(exit);
    // A usage error is one error line; a refusal is the request's line, nothing recorded (seq=-).
    if (exit === 2) expect(codesOf(run.stderr)).toEqual([code]);
    else expect(run.stdout).toMatch(new RegExp(`^CREW_REQUEST: seq=- action=\\S+ lane=\\S+ by=human:alice status=refused code=${code} detail=`));
  });
});
