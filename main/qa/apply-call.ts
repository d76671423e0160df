import type { Exchange, LaneRecord } from '../../formats/qa-record.ts';
import type { ObserverResult } from './observer-call.ts';

/**
 * Records one finished observer call in the lane (inside the caller's transaction): the
 * exchange joins the transcript, the frames are kept, and the turns [from, to) count as
 * sent once the observer ran, so they are never sent again, whatever it answered.
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
  if (result.started) record.lastSent = Math.max(record.lastSent, to);
  return exchange;
}
