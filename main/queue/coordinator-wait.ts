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

/** The coordinator's next word (see CopiedSignal), or none: then the wait asks again on a doubling timer. */
export type CoordinatorWord = { readonly heard: Promise<void>; stop(): void } | undefined;

/**
 * One wait for the coordinator, between two asks of it: says it waits once after
 * COORDINATOR_NOTICE_MS, gives up COORDINATOR_STOP_GRACE_MS after the worker began to stop
 * (`stopClock` keeps when, across the waits that share it), and otherwise pauses until the
 * coordinator's word or, without one, a doubling timer.
 */
export class CoordinatorWait {
  private readonly started = performance.now();
  private noticed = false;
  private pollMs = 1;

  constructor(
    private readonly options: {
      readonly stopping: AbortSignal | undefined;
      readonly onWaiting: (() => void) | undefined;
      /** When a wait first found the worker stopping: once the grace passed, every later wait gives up at once. */
      readonly stopClock: { at?: number };
      /** The error it gives up with (made with coordinatorSilent). */
      readonly silent: () => Error;
    },
  ) {}

  async pause(word: CoordinatorWord): Promise<void> {
    const now = performance.now();
    if (!this.noticed && now - this.started >= COORDINATOR_NOTICE_MS) {
      this.noticed = true;
      this.options.onWaiting?.();
    }
    if (this.options.stopping?.aborted === true) {
      this.options.stopClock.at ??= now;
      if (now - this.options.stopClock.at >= COORDINATOR_STOP_GRACE_MS) {
        word?.stop();
        throw this.options.silent();
      }
    }
    if (word !== undefined) return word.heard;
    await new Promise((resolve) => setTimeout(resolve, this.pollMs));
    this.pollMs = Math.min(COORDINATOR_POLL_MAX_MS, this.pollMs * 2);
  }
}
