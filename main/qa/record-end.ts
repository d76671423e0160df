import type { ResultCode } from '../../formats/codes/codes.ts';
import type { QaEvent } from '../../formats/qa/events.ts';
import type { LaneRecord, TurnRange } from '../../formats/qa/record.ts';
import { applyCall, callFacts } from './apply-call.ts';
import type { ObserverResult } from './observer-call.ts';

/** What recording a call's end decided: the event, and the code its command reports (null: none of its own). */
export interface RecordedEnd {
  readonly event: QaEvent;
  readonly code: ResultCode | null;
  readonly detail: string;
}

/**
 * Records one observer call's end in the lane (inside the caller's transaction), by its
 * mode: a bootstrap's pass makes the lane ready, a cadence check's verdict is an update,
 * a cross-check's pass completes the lane. One place for the call that ran in this process
 * and for one a later process settled (adopted, or read from its stream).
 */
export function recordEnd(record: LaneRecord, result: ObserverResult, ranges: readonly TurnRange[], at: string): RecordedEnd {
  const lane = record.lane;
  const facts = callFacts(result, at);
  const exchange = applyCall(record, result, ranges);
  if (result.mode === 'bootstrap') {
    if (result.verdict?.verdict === 'pass') {
      record.ready = true;
      record.bootstrapLen = record.transcript.length;
      return { event: { type: 'ready', lane, call: result.call, note: result.verdict.note, ...facts }, code: null, detail: '' };
    }
    const code: ResultCode = result.code ?? 'QA_BOOTSTRAP_FAILED';
    const detail = result.verdict?.guidance ?? result.detail;
    return { event: { type: 'observer_failed', lane, mode: 'bootstrap', call: result.call, code, detail, ...facts }, code, detail };
  }
  if (result.mode === 'cadence') {
    // A failed check is reported, never retried: its window closed when it was decided.
    const event: QaEvent =
      result.verdict === null
        ? { type: 'observer_failed', lane, mode: 'cadence', call: result.call, code: result.code ?? 'QA_VERDICT_MALFORMED', detail: result.detail, ...facts }
        : { type: 'update', lane, call: result.call, from: exchange.from, to: exchange.to, verdict: result.verdict.verdict, note: result.verdict.note, guidance: result.verdict.guidance ?? null, ...facts };
    // A cadence failure does not fail the turn, but a cancelled command is cancelled.
    return { event, code: result.code === 'CANCELLED' ? 'CANCELLED' : null, detail: result.code === 'CANCELLED' ? result.detail : '' };
  }
  const passed = result.verdict?.verdict === 'pass';
  if (passed) record.state = 'complete';
  const code: ResultCode | null = result.verdict === null ? result.code : passed ? null : 'QA_CROSS_CHECK_FAILED';
  const event: QaEvent = {
    type: 'cross_check',
    lane,
    call: result.call,
    verdict: result.verdict?.verdict ?? 'error',
    code,
    from: record.bootstrapLen ?? 0,
    note: result.verdict?.note ?? result.detail,
    guidance: result.verdict?.guidance ?? null,
    completion: passed ? 'allowed' : 'aborted',
    ...facts,
  };
  return { event, code, detail: passed ? '' : (event.guidance ?? event.note) };
}
