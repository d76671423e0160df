import type { QaEvent } from '../../formats/qa/events.ts';
import type { LaneRecord, ObserverConfig, Turn, TurnRange, TurnRole } from '../../formats/qa/record.ts';
import { transactLane, type Store } from '../store/store.ts';
import { applyCall, callFacts } from './apply-call.ts';
import { sweepStaleCalls } from './call-dirs.ts';
import { checkLaneId } from './lane-id.ts';
import { callObserver } from './observer-call.ts';
import { renderObserverPrompt } from './observer-prompt.ts';
import type { QaConfig } from './qa-config.ts';
import { orphanedCalls, reserveDelta, turnsIn } from './reservations.ts';
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
 * recorded and the delta reserved by a process that is gone: nobody judged it, so the
 * next window sends it again with what came after it (and the cross-check holds it).
 */
/** What the ingesting transaction decided: its report, and the cadence check due, if any. */
interface Taken {
  readonly report: QaReport;
  readonly due?: { readonly call: number; readonly epoch: number; readonly ranges: readonly TurnRange[]; readonly observer: ObserverConfig; readonly delta: readonly Turn[] };
}

export async function qaTurn(store: Store, lane: string, options: QaTurnOptions, run: SuperviseFn): Promise<QaReport> {
  checkLaneId(lane);
  // Calls of a killed process left their directories: gone before this command makes any.
  sweepStaleCalls(store.root, lane);
  const { config } = options;
  const orphaned = orphanedCalls(store.lanes.get(lane));
  const taken = await transactLane<Taken>(store, lane, (record) => {
    const refused = closedLane(lane, record);
    if (refused !== undefined || record === undefined) return { change: null, result: { report: refused! } };
    if (options.key !== undefined && record.turns.some((t) => t.key === options.key)) return { change: null, result: { report: report(lane, null, [], record) } };
    const events: QaEvent[] = [];
    if (options.role === 'reasoning') {
      record.reasoningTurns += 1;
      events.push({ type: 'turn', lane, role: 'reasoning', index: null, diff: false, unsent: record.turns.length - record.lastSent });
      return { change: { record, events }, result: { report: report(lane, null, events, record) } };
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
        const ranges = reserveDelta(record, record.calls, 'cadence', orphaned);
        due = { call: record.calls, epoch: record.epoch, ranges, observer: record.observer, delta: turnsIn(record, ranges) };
        record.sinceCadence = 0;
      } else if (record.sinceCadence % config.cadence === 0) {
        events.push({ type: 'cadence_paused', lane, turns: record.sinceCadence });
      }
    }
    return { change: { record, events }, result: { report: report(lane, null, events, record), ...(due === undefined ? {} : { due }) } };
  });
  const { due } = taken;
  if (due === undefined) return taken.report;
  const prompt = renderObserverPrompt({ lane, mode: 'cadence', delta: due.delta, transcript: [] });
  const result = await callObserver(store.root, lane, due.observer, due.call, 'cadence', prompt, run, options.cancel);
  const facts = callFacts(result, new Date().toISOString());
  return transactLane(store, lane, (record) => {
    if (record === undefined || record.epoch !== due.epoch) return { change: null, result: taken.report };
    // A failed check is reported, never retried: its window closed when it was decided.
    const exchange = applyCall(record, result, due.ranges);
    const event: QaEvent =
      result.verdict === null
        ? { type: 'observer_failed', lane, mode: 'cadence', call: due.call, code: result.code ?? 'QA_VERDICT_MALFORMED', detail: result.detail, ...facts }
        : { type: 'update', lane, call: due.call, from: exchange.from, to: exchange.to, verdict: result.verdict.verdict, note: result.verdict.note, guidance: result.verdict.guidance ?? null, ...facts };
    // A cadence failure does not fail the turn, but a cancelled command is cancelled.
    const code = result.code === 'CANCELLED' ? 'CANCELLED' : null;
    return { change: { record, events: [event] }, result: report(lane, code, [...taken.report.events, event], record, code === null ? '' : result.detail) };
  });
}
