import type { ControlRefusal } from '../../formats/crew/control.ts';
import type { LaneSpec } from '../../formats/crew/file.ts';
import { isOwnerWaiting, type LaneProgress } from '../../formats/crew/record.ts';
import type { LaneAction, LaneControlPort } from './crew-control-apply.ts';
import type { LaneCancels } from './lane-cancels.ts';
import type { DriveHandle } from './owner-wait.ts';

/** The local crew's hold on its lanes for operators' requests: its cancels, and the drive once it is under way. */
export interface LocalLaneControl extends LaneControlPort {
  /** The drive's handle (owner-wait.ts), handed over as the lanes start. */
  bind(handle: DriveHandle): void;
}

/**
 * Lane requests against a crew run in this process: whether each can apply is read from
 * where the lane is in this drive (running, parked, ended, waiting its turn) and its saved
 * stage; applying one cancels through `cancels` (the lane's calls torn down by their
 * supervisors) or marks the lane retried and drives it again at once.
 */
export function laneControlPort(progressOf: (lane: string) => LaneProgress | undefined, lanes: readonly LaneSpec[], cancels: () => LaneCancels | undefined): LocalLaneControl {
  let handle: DriveHandle | undefined;
  const indexOf = (lane: string) => lanes.findIndex((l) => l.id === lane);
  // Before the drive starts (a request taken at the crew's start) every lane waits its turn.
  const placeOf = (index: number) => handle?.place(index) ?? 'waiting';
  return {
    bind(bound) {
      handle = bound;
    },
    refusal(action: LaneAction, lane: string): ControlRefusal | null {
      const index = indexOf(lane);
      if (index < 0) return { code: 'LANE_UNKNOWN', detail: 'the crew file names no such lane' };
      const place = placeOf(index);
      const progress = progressOf(lane);
      const stage = progress?.stage;
      switch (action) {
        case 'retry':
          if (place === 'running') return { code: 'LANE_NOT_RETRYABLE', detail: `the lane is running (${stage ?? 'queued'})` };
          if (progress === undefined) return { code: 'LANE_NOT_RETRYABLE', detail: 'the lane has not started' };
          if (stage === 'complete') return { code: 'LANE_NOT_RETRYABLE', detail: 'the lane is complete' };
          if (isOwnerWaiting(progress)) return { code: 'LANE_NOT_RETRYABLE', detail: 'the lane waits at its gate for the owner\'s answer (crew answer)' };
          return null;
        case 'cancel_call':
          if (place !== 'running' || (cancels()?.calls(lane) ?? 0) === 0) return { code: 'CALL_NOT_RUNNING', detail: `the lane has no running call (${stage ?? 'not started'})` };
          return null;
        case 'cancel_lane':
          if (place !== 'running' && (stage === 'complete' || stage === 'failed')) return { code: 'LANE_NOT_RUNNING', detail: `the lane has ended (${stage})` };
          return null;
      }
    },
    apply(action: LaneAction, lane: string, by: string, seq: number): void {
      const held = cancels();
      const index = indexOf(lane);
      if (held === undefined || index < 0) return;
      if (action === 'cancel_call') return held.cancelCall(lane, by, seq);
      if (action === 'cancel_lane') held.cancelLane(lane, by, seq);
      else held.retry(lane);
      // A lane parked or ended is driven again now: retried, or ended by its cancel (the
      // driver writes it); one waiting its turn meets its mark when it starts.
      const place = placeOf(index);
      if (place === 'parked' || place === 'ended') handle?.again(index);
    },
  };
}
