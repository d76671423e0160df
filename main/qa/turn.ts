import type { QaEvent } from '../../formats/qa/events.ts';
import type { LaneRecord, ObserverConfig, Turn, TurnRange, TurnRole } from '../../formats/qa/record.ts';
import { transact, type Store } from '../store/store.ts';
import { randomUUID } from 'node:crypto';
import { callDirName, removeCallDir, sweepStaleCalls } from './call-dirs.ts';
import { checkLaneId } from './lane-id.ts';
import { callObserver } from './observer-call.ts';
import { renderObserverPrompt } from './observer-prompt.ts';
import type { QaConfig } from './qa-config.ts';
import { recordEnd } from './record-end.ts';
import { keptDirs, orphanedCalls, reserveDelta, turnsIn } from './reservations.ts';
import { settleOrphanedCalls } from './settle-calls.ts';
import { report, type QaReport } from './report.ts';
import type { SuperviseFn } from './supervise-fn.ts';

export interface QaTurnOptions {
  readonly role: TurnRole;
  readonly text: string;
  /** The turn carries a diff (counts toward a review request). Not for reasoning. */
  readonly diff: boolean;
  /** Names the turn: a turn whose key the lane already holds is not recorded again (a retried ingest). */
  readonly key?: string;
  readonly config: QaConfig;
  readonly cancel?: AbortSignal;
}

/** A refusal for a lane that cannot take turns, or undefined. */
export function closedLane(lane: string, record: LaneRecord | undefined): QaReport | undefined {
  if (record === undefined) return report(lane, 'QA_NO_OBSERVER', [], undefined, `no lane ${lane} in this state root`);
  if (record.state !== 'active') return report(lane, 'QA_LANE_CLOSED', [], record, `lane ${lane} is ${record.state}`);
  return undefined;
}

/**
 * `qa turn`: ingests one turn in one transaction. User and assistant turns are stored
 * and count toward cadence (turns, not decisions); reasoning is only counted, its text
 * stored nowhere. A diff-bearing turn counts toward a review request. When a cadence
 * window closes and the observer is ready, the observer reviews the turns not yet sent
 * (the delta), and its verdict is recorded in a second transaction; a window that closes
 * before readiness is reported paused. A process killed between the two leaves the turn
 * recorded and the delta reserved by a process that is gone: before anything else the
 * next command settles that call (its observer adopted, or its stream read; see
 * {@link settleOrphanedCalls}), and only a call whose stream tells nothing is lost, its
 * delta sent again with the next window (and held by the cross-check).
 */
/** What the ingesting transaction decided: its report, and the cadence check due, if any. */
interface Taken {
  readonly report: QaReport;
  readonly due?: { readonly call: number; readonly dir: string; readonly epoch: number; readonly ranges: readonly TurnRange[]; readonly observer: ObserverConfig; readonly delta: readonly Turn[] };
}

export async function qaTurn(store: Store, lane: string, options: QaTurnOptions, supervise: SuperviseFn): Promise<QaReport> {
  checkLaneId(lane);
  const settled = await settleOrphanedCalls(store, lane, supervise, options.cancel);
  // Calls of a killed process left their directories: gone before this command makes any
  // (those of calls still open are kept: their ends are not recorded yet).
  sweepStaleCalls(store.root, lane, keptDirs(store.lanes.get(lane)));
  const { config } = options;
  const orphaned = orphanedCalls(store.lanes.get(lane));
  const nonce = randomUUID();
  const taken = await transact<'lanes', Taken>(store, 'lanes', lane, (record) => {
    const refused = closedLane(lane, record);
    if (refused !== undefined || record === undefined) return { change: null, result: { report: refused! } };
    if (options.key !== undefined && record.turns.some((t) => t.key === options.key)) return { change: null, result: { report: report(lane, null, settled, record) } };
    const events: QaEvent[] = [...settled];
    if (options.role === 'reasoning') {
      record.reasoningTurns += 1;
      events.push({ type: 'turn', lane, role: 'reasoning', index: null, diff: false, unsent: record.turns.length - record.lastSent });
      return { change: { record, events: events.slice(settled.length) }, result: { report: report(lane, null, events, record) } };
    }
    const index = record.turns.length;
    record.turns.push({ index, role: options.role, text: options.text, diff: options.diff, ...(options.key === undefined ? {} : { key: options.key }) });
    record.sinceCadence += 1;
    events.push({ type: 'turn', lane, role: options.role, index, diff: options.diff, unsent: record.turns.length - record.lastSent });
    if (options.diff) {
      record.unreviewedDiffs.push(index);
      if (record.unreviewedDiffs.length >= config.reviewCooldown) {
        const turns = record.unreviewedDiffs;
        events.push({ type: 'review_request', lane, reason: 'cooldown', turns, summary: `${turns.length} diff-bearing turn(s) since the last review request: ${turns.join(', ')}` });
        record.unreviewedDiffs = [];
      }
    }
    let due: Taken['due'];
    if (record.sinceCadence >= config.cadence) {
      if (record.ready) {
        // The window closes and the delta is reserved now, in this transaction: a second
        // command on the lane while this call runs cannot send the same turns again. A
        // delta a killed command reserved was never judged: it is sent again with this one.
        record.calls += 1;
        const dir = callDirName(record.calls, nonce);
        const ranges = reserveDelta(record, record.calls, 'cadence', orphaned, { dir });
        due = { call: record.calls, dir, epoch: record.epoch, ranges, observer: record.observer, delta: turnsIn(record, ranges) };
        record.sinceCadence = 0;
      } else if (record.sinceCadence % config.cadence === 0) {
        events.push({ type: 'cadence_paused', lane, turns: record.sinceCadence });
      }
    }
    // The settled calls' events were committed by their own transactions: reported, not journaled twice.
    return { change: { record, events: events.slice(settled.length) }, result: { report: report(lane, null, events, record), ...(due === undefined ? {} : { due }) } };
  });
  const { due } = taken;
  if (due === undefined) return taken.report;
  const prompt = renderObserverPrompt({ lane, mode: 'cadence', delta: due.delta, transcript: [] });
  const result = await callObserver(store, lane, due.observer, due.call, 'cadence', due.dir, prompt, supervise, options.cancel);
  const at = new Date().toISOString();
  const ended = await transact(store, 'lanes', lane, (record) => {
    if (record === undefined || record.epoch !== due.epoch) return { change: null, result: taken.report };
    const { event, code, detail } = recordEnd(record, result, due.ranges, at);
    return { change: { record, events: [event] }, result: report(lane, code, [...taken.report.events, event], record, detail) };
  });
  removeCallDir(store.root, lane, due.dir);
  return ended;
}
