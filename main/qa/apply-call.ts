import type { ObserverCallFacts } from '../../formats/qa/events.ts';
import type { Exchange, LaneRecord, TurnRange } from '../../formats/qa/record.ts';
import type { ObserverResult } from './observer-call.ts';
import { releaseDelta, turnsIn } from './reservations.ts';

/** Frames kept per lane: the newest, so a long lane's record stays bounded. */
export const FRAMES_KEPT = 1_000;

/**
 * Records one finished observer call in the lane (inside the caller's transaction): the
 * exchange joins the transcript and the frames are kept (the newest {@link FRAMES_KEPT}).
 * The delta (`ranges`) was reserved when the call was decided: once the observer ran it
 * counts as sent whatever it answered, and the turns' text is dropped (unless another
 * open reservation still holds them); when the observer never ran, it is given back.
 */
export function applyCall(record: LaneRecord, result: ObserverResult, ranges: readonly TurnRange[]): Exchange {
  const exchange: Exchange = {
    call: result.call,
    mode: result.mode,
    from: ranges[0]?.[0] ?? record.lastSent,
    to: ranges.at(-1)?.[1] ?? record.lastSent,
    verdict: result.verdict?.verdict ?? 'error',
    code: result.code,
    note: result.verdict?.note ?? result.detail,
    guidance: result.verdict?.guidance ?? null,
  };
  record.transcript.push(exchange);
  record.frames.push(...result.frames);
  if (record.frames.length > FRAMES_KEPT) record.frames.splice(0, record.frames.length - FRAMES_KEPT);
  const sent = releaseDelta(record, result.call, result.started);
  const held = new Set(turnsIn(record, (record.reserved ?? []).flatMap((r) => r.ranges)).map((t) => t.index));
  for (const turn of turnsIn(record, sent)) if (!held.has(turn.index)) turn.text = null;
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
      exit_code: outcome.childExitCode,
      signal: outcome.signal,
      stderr: [...outcome.stderrTail],
    },
  };
}
