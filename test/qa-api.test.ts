import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { buildOutcome } from '../workers/supervise/outcome.ts';
import type { SupervisionSpec } from '../workers/supervise/spec.ts';
import { inProcessSupervise, qaFinish, qaStart, qaStatus, qaTurn, QA_DEFAULTS, type QaReport, type SuperviseFn } from '../main/qa/index.ts';
import { openStore, readLaneJournal, type Store } from '../main/store/store.ts';
import type { ObserverConfig } from '../formats/qa/record.ts';
import { ensureBuilt } from './helpers/cli.ts';
import { signedActions } from './helpers/actions.ts';
import { OBSERVERS } from './helpers/qa.ts';
import { tempRoot } from './helpers/tmp.ts';

// The library surface the crew calls (from a worker thread, through comlink): plain data
// in and out, and every observer call made through the SuperviseFn it is given.

const root = tempRoot('qa-api');
let store: Store;
let observer: ObserverConfig;

beforeAll(() => {
  ensureBuilt();
  const actions = signedActions(root, {
    observe: { timeout_mode: 'admitted_progress_inactivity', progress: 'claude-stream-json', cleanup_reserve_ms: 0, post_provider_ms: 2000 },
  });
  store = openStore(join(root, 'state'));
  observer = { argv: [process.execPath, `${OBSERVERS}/pass.mjs`, '{prompt}', '{result}'], actionsFile: actions.file, trust: actions.trust, action: 'observe', timeoutMs: 20_000 };
});

/** The fields of an outcome that say nothing here. */
const FACTS = {
  timeoutMode: 'admitted_progress_inactivity', descriptorSha256: null, childExitCode: 0, signal: null, cancelSignal: null, spawnError: null,
  deniedTool: null, marks: 0, durationMs: 5, cleanupConfirmed: true, expiryLateMs: null, firstSignalMs: null, goneMs: null,
} as const;

/** A SuperviseFn that records every spec it is given. */
function recording(inner: SuperviseFn = inProcessSupervise): { supervise: SuperviseFn; specs: SupervisionSpec[] } {
  const specs: SupervisionSpec[] = [];
  return { specs, supervise: (spec, options) => (specs.push(spec), inner(spec, options)) };
}

const plain = (report: QaReport) => expect(JSON.parse(JSON.stringify(report))).toEqual(report);

describe('main/qa API', () => {
  test('should run every observer call through the given SuperviseFn, with its mode, policy and the signed action', async () => {
    const { supervise, specs } = recording();
    const started = await qaStart(store, 'api-1', { observer }, supervise);
    expect(started.code).toBe(null);
    plain(started);
    for (let i = 0; i < 3; i++) plain(await qaTurn(store, 'api-1', { role: 'user', text: `t${i}`, diff: false, config: QA_DEFAULTS }, supervise));
    const finished = await qaFinish(store, 'api-1', {}, supervise);
    plain(finished);
    expect(finished.code).toBe(null);
    expect(specs.map((s) => [s.env?.['LANEWARD_QA_MODE'], s.toolPolicy?.allow.join(','), s.mode, s.progress, s.timeoutMs, s.action])).toEqual([
      ['bootstrap', 'read,search', 'admitted_progress_inactivity', 'claude-stream-json', 20_000, 'observe'],
      ['cadence', 'search', 'admitted_progress_inactivity', 'claude-stream-json', 20_000, 'observe'],
      ['cross-check', 'read,search,shell,write,other', 'admitted_progress_inactivity', 'claude-stream-json', 20_000, 'observe'],
    ]);
    for (const spec of specs) expect(spec.descriptorSha256).toMatch(/^[0-9a-f]{64}$/);
    // Every event a command reported is in the journal, in order.
    const journal = readLaneJournal(store, 'api-1');
    expect(journal.map((e) => e.type)).toEqual(['started', 'ready', 'turn', 'turn', 'turn', 'update', 'cross_check']);
    // Each call's verdict is journaled with when it ended and how its supervision went.
    const calls = journal.filter((e) => e.type === 'ready' || e.type === 'update' || e.type === 'cross_check');
    for (const event of calls) {
      expect(event.supervision).toMatchObject({ status: 'ok', cleanup_confirmed: true, session: null });
      expect(Date.parse(event.at!)).toBeGreaterThanOrEqual(Date.parse(event.supervision!.started_at));
      expect(event.supervision!.duration_ms).toBeGreaterThanOrEqual(0);
    }
    expect(calls).toHaveLength(3);
    expect(qaStatus(store, 'api-1').status).toMatchObject({ state: 'complete', calls: 3, journal: 7 });
    // Sent turns keep no text in the record.
    expect(store.lanes.get('api-1')!.turns.map((t) => t.text)).toEqual([null, null, null]);
  });

  test('should take a complete lane as its pass when the caller resumes it, and refuse it QA_LANE_CLOSED otherwise, sending nothing either way', async () => {
    const { supervise, specs } = recording();
    expect((await qaStart(store, 'api-resume', { observer }, supervise)).code).toBe(null);
    expect((await qaFinish(store, 'api-resume', {}, supervise)).code).toBe(null);
    const sent = specs.length;
    const journaled = readLaneJournal(store, 'api-resume').length;
    // A crew whose save of its next stage was lost finishes again: the pass stands.
    const resumed = await qaFinish(store, 'api-resume', { resume: true }, supervise);
    expect(resumed).toMatchObject({ code: null, events: [], status: { state: 'complete' } });
    // From a shell, the same lane is closed.
    const again = await qaFinish(store, 'api-resume', {}, supervise);
    expect(again).toMatchObject({ code: 'QA_LANE_CLOSED', events: [] });
    expect(specs).toHaveLength(sent);
    expect(readLaneJournal(store, 'api-resume')).toHaveLength(journaled);
  });

  test('should record an observer failure from its outcome, once, never retried', async () => {
    const { supervise: passing } = recording();
    expect((await qaStart(store, 'api-2', { observer }, passing)).code).toBe(null);
    const expired: SuperviseFn = async (spec) =>
      buildOutcome({
        code: 'LEASE_EXPIRED', action: spec.action, timeoutMode: spec.mode, descriptorSha256: spec.descriptorSha256, childExitCode: 143, signal: 'SIGTERM',
        cancelSignal: null, spawnError: null, deniedTool: null, providerStarted: true, attempts: 1, marks: 0, durationMs: 5, cleanupConfirmed: true,
        expiryLateMs: 0, firstSignalMs: 0, goneMs: 1,
      });
    const { supervise, specs } = recording(expired);
    const outs = [];
    for (let i = 0; i < 3; i++) outs.push(await qaTurn(store, 'api-2', { role: 'assistant', text: `t${i}`, diff: false, config: QA_DEFAULTS }, supervise));
    expect(specs).toHaveLength(1);
    expect(outs[2]!.events.at(-1)).toMatchObject({ type: 'observer_failed', mode: 'cadence', code: 'LEASE_EXPIRED' });
    expect(outs[2]!.code).toBe(null);
    // The observer started, so those turns count as sent: the next window sends only new ones.
    expect(outs[2]!.status).toMatchObject({ lastSent: 3, sinceCadence: 0 });
    const finished = await qaFinish(store, 'api-2', {}, supervise);
    expect(specs).toHaveLength(2);
    expect(finished.code).toBe('LEASE_EXPIRED');
    expect(finished.events).toMatchObject([{ type: 'cross_check', verdict: 'error', code: 'LEASE_EXPIRED', completion: 'aborted' }]);
  });

  test('should give the delta back when the observer never started', async () => {
    expect((await qaStart(store, 'api-3', { observer }, inProcessSupervise)).code).toBe(null);
    const notFound: SuperviseFn = async (spec) =>
      buildOutcome({ ...FACTS, code: 'COMMAND_NOT_FOUND', action: spec.action, childExitCode: null, spawnError: 'ENOENT', providerStarted: false, attempts: 0 });
    let last: QaReport | undefined;
    for (let i = 0; i < 3; i++) last = await qaTurn(store, 'api-3', { role: 'user', text: `t${i}`, diff: false, config: QA_DEFAULTS }, notFound);
    expect(last!.events.at(-1)).toMatchObject({ type: 'observer_failed', code: 'COMMAND_NOT_FOUND' });
    expect(last!.status).toMatchObject({ lastSent: 0, unsent: 3, sinceCadence: 0 });
    const { supervise, specs } = recording();
    for (let i = 3; i < 6; i++) last = await qaTurn(store, 'api-3', { role: 'user', text: `t${i}`, diff: false, config: QA_DEFAULTS }, supervise);
    expect(last!.events.at(-1)).toMatchObject({ type: 'update', from: 0, to: 6, verdict: 'pass' });
    expect(specs).toHaveLength(1);
  });

  test('should keep at most 200 frames a call and the newest 1,000 a lane', async () => {
    // An observer that prints 300 lines of prose a call and passes.
    const chatty: SuperviseFn = async (spec) => {
      writeFileSync(spec.stdoutFile!, Array.from({ length: 300 }, (_, i) => `call ${spec.env!['LANEWARD_QA_CALL']} line ${i}`).join('\n'));
      writeFileSync(spec.env!['LANEWARD_QA_RESULT']!, JSON.stringify({ verdict: 'pass', note: 'ok' }));
      return buildOutcome({ ...FACTS, code: null, action: spec.action, providerStarted: true, attempts: 1 });
    };
    expect((await qaStart(store, 'api-4', { observer }, chatty)).status?.frames).toEqual({ bootstrap: 200, cadence: 0, 'cross-check': 0 });
    const config = { cadence: 1, reviewCooldown: 1 };
    let last: QaReport | undefined;
    for (let i = 0; i < 5; i++) last = await qaTurn(store, 'api-4', { role: 'assistant', text: `t${i}`, diff: false, config }, chatty);
    expect(last!.status?.frames).toEqual({ bootstrap: 0, cadence: 1000, 'cross-check': 0 });
    const frames = store.lanes.get('api-4')!.frames;
    expect([frames[0], frames.at(-1)]).toEqual([
      { call: 2, mode: 'cadence', kind: 'line', text: 'call 2 line 0' },
      { call: 6, mode: 'cadence', kind: 'line', text: 'call 6 line 199' },
    ]);
  });

  test('should record a keyed turn once: the same key again (an ingest retried after a crash) changes nothing', async () => {
    const passing: SuperviseFn = async (spec) => {
      writeFileSync(spec.env!['LANEWARD_QA_RESULT']!, JSON.stringify({ verdict: 'pass', note: 'ok' }));
      return buildOutcome({ ...FACTS, code: null, action: spec.action, providerStarted: true, attempts: 1 });
    };
    expect((await qaStart(store, 'api-5', { observer }, passing)).code).toBe(null);
    const turn = { role: 'assistant', text: 'lost turn', diff: true, key: 'agent-2-assistant', config: QA_DEFAULTS } as const;
    const first = await qaTurn(store, 'api-5', turn, passing);
    expect(first.events.map((e) => e.type)).toEqual(['turn', 'review_request']);
    const again = await qaTurn(store, 'api-5', turn, passing);
    expect(again).toMatchObject({ code: null, events: [] });
    expect(again.status).toMatchObject({ turns: 1, unreviewedDiffs: [] });
    // Another key, or none, is another turn.
    expect((await qaTurn(store, 'api-5', { ...turn, key: 'agent-3-assistant' }, passing)).status?.turns).toBe(2);
    expect((await qaTurn(store, 'api-5', { role: 'user', text: 'x', diff: false, config: QA_DEFAULTS }, passing)).status?.turns).toBe(3);
  });
});
