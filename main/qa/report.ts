import type { ResultCode } from '../../formats/codes/codes.ts';
import type { QaEvent } from '../../formats/qa/events.ts';
import type { LaneRecord, LaneStatus } from '../../formats/qa/record.ts';

export type { LaneStatus } from '../../formats/qa/record.ts';

/**
 * What every QA function returns: plain data (it crosses a worker boundary), the events
 * in order, the code that decides the exit status (null: success), the lane after.
 */
export interface QaReport {
  readonly lane: string;
  readonly code: ResultCode | null;
  /** What the code is about ('' when the events say it). */
  readonly message: string;
  readonly events: readonly QaEvent[];
  readonly status: LaneStatus | null;
}

export function laneStatus(record: LaneRecord): LaneStatus {
  const frames = { bootstrap: 0, cadence: 0, 'cross-check': 0 };
  for (const frame of record.frames) frames[frame.mode]++;
  return {
    lane: record.lane,
    state: record.state,
    ready: record.ready,
    calls: record.calls,
    turns: record.turns.length,
    reasoningTurns: record.reasoningTurns,
    lastSent: record.lastSent,
    unsent: record.turns.length - record.lastSent,
    sinceCadence: record.sinceCadence,
    unreviewedDiffs: [...record.unreviewedDiffs],
    exchanges: record.transcript.length,
    bootstrapLen: record.bootstrapLen,
    frames,
    epoch: record.epoch,
    journal: record.seq,
  };
}

export function report(lane: string, code: ResultCode | null, events: readonly QaEvent[], record: LaneRecord | undefined, message = ''): QaReport {
  return { lane, code, message, events, status: record === undefined ? null : laneStatus(record) };
}
