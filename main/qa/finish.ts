import type { QaEvent } from '../../formats/qa/events.ts';
import type { Exchange, ObserverConfig, Turn, TurnRange } from '../../formats/qa/record.ts';
import { transact, type Store } from '../store/store.ts';
import { randomUUID } from 'node:crypto';
import { callDirName, removeCallDir, sweepStaleCalls } from './call-dirs.ts';
import { recordEnd } from './record-end.ts';
import { settleOrphanedCalls } from './settle-calls.ts';
import { checkLaneId } from './lane-id.ts';
import { callObserver } from './observer-call.ts';
import { renderObserverPrompt } from './observer-prompt.ts';
import { keptDirs, orphanedCalls, reserveDelta, turnsIn } from './reservations.ts';
import { report, type QaReport } from './report.ts';
import type { SuperviseFn } from './supervise-fn.ts';

export interface QaFinishOptions {
  readonly cancel?: AbortSignal;
  /**
   * The caller resumes its own lane (a crew whose save of the next stage was lost: killed,
   * or its job taken up again after Redis lost its last writes): a lane already complete is
   * the pass that completed it, reported again with nothing sent. A shell's `qa finish` on a
   * complete lane is still QA_LANE_CLOSED.
   */
  readonly resume?: boolean;
}

interface Begun {
  readonly report?: QaReport;
  readonly call?: { readonly call: number; readonly dir: string; readonly epoch: number; readonly ranges: readonly TurnRange[]; readonly bootstrapLen: number; readonly observer: ObserverConfig; readonly delta: readonly Turn[]; readonly transcript: readonly Exchange[] };
}

/**
 * `qa finish` (finish_success): the cross-check, never skipped. No lane or a stopped one
 * (no observer) and an observer that never passed its bootstrap refuse completion with
 * a code, before any call. Calls a killed process left open are settled first (see
 * {@link settleOrphanedCalls}): a cross-check that was adopted or read and passed has
 * completed the lane, and is reported as this command's end. Otherwise the observer gets the transcript from the bootstrap
 * length on, plus the turns not yet sent, under the full tool policy. Only a passing
 * verdict completes the lane (code null); a failing one aborts completion with its
 * guidance (QA_CROSS_CHECK_FAILED); a call with no verdict aborts it with its own code.
 */
export async function qaFinish(store: Store, lane: string, options: QaFinishOptions, supervise: SuperviseFn): Promise<QaReport> {
  checkLaneId(lane);
  const settled = await settleOrphanedCalls(store, lane, supervise, options.cancel);
  // A cross-check settled here answered this finish (a lost one is an observer_failed event):
  // its pass completed the lane, its fail aborts completion, and nothing is sent again.
  const crossChecked = settled.findLast((e) => e.type === 'cross_check');
  if (crossChecked?.type === 'cross_check') {
    const code = crossChecked.code as QaReport['code'];
    return report(lane, code, settled, store.lanes.get(lane), code === null ? '' : (crossChecked.guidance ?? crossChecked.note));
  }
  sweepStaleCalls(store.root, lane, keptDirs(store.lanes.get(lane)));
  const orphaned = orphanedCalls(store.lanes.get(lane));
  const nonce = randomUUID();
  const begun = await transact<'lanes', Begun>(store, 'lanes', lane, (record) => {
    if (record === undefined || record.state === 'stopped') {
      const event: QaEvent = { type: 'completion_refused', lane, code: 'QA_NO_OBSERVER' };
      const why = record === undefined ? `no lane ${lane} in this state root` : `lane ${lane} was stopped`;
      return { change: record === undefined ? null : { record, events: [event] }, result: { report: report(lane, 'QA_NO_OBSERVER', [event], record, why) } };
    }
    if (record.state === 'complete' && options.resume === true) return { change: null, result: { report: report(lane, null, [], record, '') } };
    if (record.state === 'complete') return { change: null, result: { report: report(lane, 'QA_LANE_CLOSED', [], record, `lane ${lane} is already complete`) } };
    if (!record.ready || record.bootstrapLen === null) {
      const event: QaEvent = { type: 'completion_refused', lane, code: 'QA_NOT_BOOTSTRAPPED' };
      return { change: { record, events: [event] }, result: { report: report(lane, 'QA_NOT_BOOTSTRAPPED', [event], record, `lane ${lane} has no passing bootstrap`) } };
    }
    record.calls += 1;
    // Every turn no recorded verdict covers is judged here: the unsent ones, those of a
    // call whose process died before recording its end, and those a live call still holds.
    const dir = callDirName(record.calls, nonce);
    const ranges = reserveDelta(record, record.calls, 'cross-check', orphaned, { includeLive: true, dir });
    const call = {
      call: record.calls,
      dir,
      epoch: record.epoch,
      ranges,
      bootstrapLen: record.bootstrapLen,
      observer: record.observer,
      delta: turnsIn(record, ranges),
      transcript: record.transcript.slice(record.bootstrapLen),
    };
    return { change: { record, events: [] }, result: { call } };
  });
  const { call } = begun;
  if (call === undefined) return begun.report!;
  const prompt = renderObserverPrompt({ lane, mode: 'cross-check', delta: call.delta, transcript: call.transcript });
  const result = await callObserver(store, lane, call.observer, call.call, 'cross-check', call.dir, prompt, supervise, options.cancel);
  const at = new Date().toISOString();
  const ended = await transact(store, 'lanes', lane, (record) => {
    // A stop or reset while the cross-check ran: its verdict belongs to a history that is gone.
    if (record === undefined || record.epoch !== call.epoch) {
      return { change: null, result: report(lane, 'QA_NOT_BOOTSTRAPPED', settled, record, `lane ${lane} was stopped or reset during the cross-check`) };
    }
    const { event, code, detail } = recordEnd(record, result, call.ranges, at);
    return { change: { record, events: [event] }, result: report(lane, code, [...settled, event], record, detail) };
  });
  removeCallDir(store.root, lane, call.dir);
  return ended;
}
