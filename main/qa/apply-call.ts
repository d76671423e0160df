import type { ObserverCallFacts } from '../../formats/qa/events.ts';
import type { Exchange, LaneRecord } from '../../formats/qa/record.ts';
import type { ObserverResult } from './observer-call.ts';

/** Frames kept per lane: the newest, so a long lane's record stays bounded. */
export const FRAMES_KEPT = 1_000;

/**
 * Records one finished observer call in the lane (inside the caller's transaction): the
 * exchange joins the transcript and the frames are kept (the newest {@link FRAMES_KEPT}).
 * The delta [from, to) was reserved when the call was decided: once the observer ran it
 * counts as sent whatever it answered, and the turns' text is dropped; when the observer
 * never ran (and no later call reserved more), the reservation is given back.
 */
export function applyCall(record: LaneRecord, result: ObserverResult, from: number, to: number): Exchange {
  const exchange: Exchange = {
    call: result.call,
    mode: result.mode,
    from,
    to,
    verdict: result.verdict?.verdict ?? 'error',
    code: result.code,
    note: result.verdict?.note ?? result.detail,
    guidance: result.verdict?.guidance ?? null,
  };
  record.transcript.push(exchange);
  record.frames.push(...result.frames);
  if (record.frames.length > FRAMES_KEPT) record.frames.splice(0, record.frames.length - FRAMES_KEPT);
  if (result.started) {
    for (const turn of record.turns.slice(from, to)) turn.text = null;
  } else if (record.lastSent === to) {
    record.lastSent = from;
  }
  return exchange;
}

/**
 * What the lane's journal keeps of one call beside its verdict: when it began and ended
 * and how its supervision went. `at` is taken by the caller once the call returned, not
 * inside the transaction that records it (a transaction step stays free of reads of the world).
 */
export function callFacts(result: ObserverResult, at: string): Required<ObserverCallFacts> {
  const { outcome } = result;
  return {
    at,
    supervision: {
      started_at: result.startedAt,
      status: outcome.status,
      marks: outcome.marks,
      duration_ms: Math.round(outcome.durationMs),
      cleanup_confirmed: outcome.cleanupConfirmed,
      session: outcome.provider?.sessionId ?? null,
      code: outcome.code,
    },
  };
}
