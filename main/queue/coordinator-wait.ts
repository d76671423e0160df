import { LanewardError } from '../../formats/codes/error.ts';

// A worker waits for its lane's coordinator at two points: before a child starts (until the
// coordinator's copy holds the lane's records: LaneMirror's durable flush) and before a
// lane starts there (until the coordinator has put back in the lane's stream what its copy
// holds and the stream lost: askCoordinator). Both wait the same way.

/** The first ask again comes after 1 ms, each next one twice as late, up to this. */
export const COORDINATOR_POLL_MAX_MS = 100;
/** How long a wait lasts before the worker says so (once per wait). */
export const COORDINATOR_NOTICE_MS = 5_000;
/** How long a wait goes on once the worker is stopping: then the lane stops there and its job is let go. */
export const COORDINATOR_STOP_GRACE_MS = 5_000;

/** The errors a wait gives up with when its worker stops before the coordinator answered. */
const SILENT = new WeakSet<Error>();

/** Whether `error` says a wait for the coordinator was given up (the worker is stopping: the lane winds down and its job is let go, to be taken up again). */
export function isCoordinatorSilent(error: unknown): boolean {
  return error instanceof Error && SILENT.has(error);
}

/** COORDINATOR_SILENT for lane `lane` of crew `crew`, `what` the wait was for. */
export function coordinatorSilent(lane: string, crew: string, what: string): Error {
  const error = new LanewardError('COORDINATOR_SILENT', `lane ${lane} of crew ${crew}: its coordinator had not ${what} when this worker stopped; the lane starts nothing more here and its job is let go`);
  SILENT.add(error);
  return error;
}
