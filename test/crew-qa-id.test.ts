import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { crewQaLaneId, CREW_QA_LANE_ID_MAX, splitCrewQaLaneId } from '../formats/crew/qa-id.ts';
import type { ObserverConfig } from '../formats/qa/record.ts';
import { qaLane } from '../main/crew/lane-driver.ts';
import { checkLaneId } from '../main/qa/lane-id.ts';
import { qaStart, qaStatus, qaTurn, QA_DEFAULTS, type SuperviseFn } from '../main/qa/index.ts';
import { openStore, type Store } from '../main/store/store.ts';
import { buildOutcome } from '../workers/supervise/outcome.ts';
import { signedActions } from './helpers/actions.ts';
import { ensureBuilt } from './helpers/cli.ts';
import { tempRoot } from './helpers/tmp.ts';

// A crew lane's QA id: one record per (crew, lane), whatever dots the names hold.

const root = tempRoot('crew-qa-id');
let store: Store;
let observer: ObserverConfig;

/** An observer that passes every call: it writes its verdict where the call asks, starting nothing. */
const passing: SuperviseFn = async (spec) => {
  writeFileSync(spec.env!['LANEWARD_QA_RESULT']!, JSON.stringify({ verdict: 'pass', note: 'ok' }));
  return buildOutcome({
    code: null, action: spec.action, timeoutMode: spec.mode, descriptorSha256: spec.descriptorSha256, childExitCode: 0, signal: null, cancelSignal: null,
    spawnError: null, deniedTool: null, providerStarted: true, attempts: 1, marks: 1, durationMs: 1, cleanupConfirmed: true, expiryLateMs: null, firstSignalMs: null, goneMs: null,
  });
};

beforeAll(() => {
  ensureBuilt();
  const actions = signedActions(root, {
    observe: { timeout_mode: 'admitted_progress_inactivity', progress: 'claude-stream-json', cleanup_reserve_ms: 0, post_provider_ms: 2000 },
  });
  store = openStore(join(root, 'state'));
  observer = { argv: ['observer', '{prompt}', '{result}'], actionsFile: actions.file, trust: actions.trust, action: 'observe', timeoutMs: 20_000 };
});

const pairs: [string, string][] = [
  ['x', 'y.z'],
  ['x.y', 'z'],
  ['x.', 'y'],
  ['x', 'y'],
  ['a..b', 'c'],
  ['a.', 'b'],
  ['a', 'b..c'],
  ['a.b.c', 'd'],
  ['a', 'b.c.d'],
  ['a.b', 'c.d'],
  ['lane', 'lane-01'],
];

describe('crewQaLaneId', () => {
  test.each(pairs)('should give crew %j lane %j an id the QA store accepts, and read the pair back from it', (crew, lane) => {
    const id = crewQaLaneId(crew, lane);
    expect(checkLaneId(id)).toBe(id);
    expect(splitCrewQaLaneId(id)).toEqual({ crew, lane });
  });

  test('should give every pair its own id (crew x lane y.z and crew x.y lane z no longer share x.y.z)', () => {
    const ids = pairs.map(([crew, lane]) => crewQaLaneId(crew, lane));
    expect(new Set(ids).size).toBe(pairs.length);
    expect(crewQaLaneId('x', 'y.z')).toBe('x.y.z');
    expect(crewQaLaneId('x.y', 'z')).toBe('x..y.z');
  });

  test('should keep the id of a crew whose name has no dot as it was: <crew>.<lane>', () => {
    expect(crewQaLaneId('nightly-review_2', 'lane-01.a')).toBe('nightly-review_2.lane-01.a');
  });

  test('should stay valid for the longest names a crew file allows', () => {
    const crew = `a${'.'.repeat(62)}`;
    const lane = 'b'.repeat(63);
    const id = crewQaLaneId(crew, lane);
    expect(id).toHaveLength(CREW_QA_LANE_ID_MAX);
    expect(checkLaneId(id)).toBe(id);
    expect(splitCrewQaLaneId(id)).toEqual({ crew, lane });
  });

  test.each(['abc', 'a..b', '.a', 'a.', 'a...'])('should read no pair from %j', (id) => {
    expect(splitCrewQaLaneId(id)).toBe(null);
  });
});

describe('QA records of two crews on one state root', () => {
  test('should keep crew x lane y.z and crew x.y lane z apart, run one after the other', async () => {
    const first = qaLane({ crew: 'x' }, { id: 'y.z' } as never);
    const second = qaLane({ crew: 'x.y' }, { id: 'z' } as never);
    expect((await qaStart(store, first, { observer }, passing)).code).toBe(null);
    expect((await qaTurn(store, first, { role: 'assistant', text: 'changed a file', diff: true, config: QA_DEFAULTS }, passing)).code).toBe(null);
    // The second crew's lane starts its own observer; the first's history stays as it was.
    const started = await qaStart(store, second, { observer }, passing);
    expect(started.code).toBe(null);
    expect(started.status).toMatchObject({ lane: second, turns: 0, ready: true, epoch: 0 });
    expect(qaStatus(store, first).status).toMatchObject({ lane: first, turns: 1, ready: true, epoch: 0 });
  });
});
