/** An operator's cancel the lane driver is to end its lane with: which, by whom, and the request's seq. */
export interface CancelMark {
  readonly kind: 'call' | 'lane';
  readonly by: string;
  readonly seq: number;
}

interface LaneState {
  /** Aborted by a cancel: every call of the lane that holds its signal is torn down. */
  controller: AbortController;
  /** The lane's supervised calls under way (admitted, waiting for a slot, or running). */
  calls: number;
  mark: CancelMark | null;
  /** A retry the crew applied: the lane's next drive retries it (as --retry-failed does). */
  retry: boolean;
}

/**
 * The operator's hold on each lane of a running crew: one AbortController per lane under
 * the crew's stop, so a cancel tears down that lane's calls alone (each with the
 * supervisor's own teardown and /proc proof), and the marks the lane driver reads to end
 * the lane typed (CALL_CANCELLED, LANE_CANCELLED) rather than as interrupted by a stop.
 */
export class LaneCancels {
  private readonly lanes = new Map<string, LaneState>();

  constructor(private readonly stop: AbortSignal) {}

  /** What a call of `lane` is cancelled by: the crew's stop or the lane's own cancel. */
  signal(lane: string): AbortSignal {
    return AbortSignal.any([this.stop, this.of(lane).controller.signal]);
  }

  /** Counts a call of `lane` under way; returns its end. */
  track(lane: string): () => void {
    const state = this.of(lane);
    state.calls += 1;
    return () => {
      state.calls -= 1;
    };
  }

  /** Calls of `lane` under way now. */
  calls(lane: string): number {
    return this.lanes.get(lane)?.calls ?? 0;
  }

  /**
   * Cancels the calls of `lane` under way now; the lane's next calls get a fresh signal
   * (the lane itself ends on the cancelled step, CALL_CANCELLED).
   */
  cancelCall(lane: string, by: string, seq: number): void {
    const state = this.of(lane);
    state.mark = { kind: 'call', by, seq };
    const cancelled = state.controller;
    state.controller = new AbortController();
    cancelled.abort('SIGTERM');
  }

  /** Cancels the lane: its calls now and any it would start, until it is retried. */
  cancelLane(lane: string, by: string, seq: number): void {
    const state = this.of(lane);
    state.mark = { kind: 'lane', by, seq };
    state.controller.abort('SIGTERM');
  }

  /** The cancel `lane` is to end with, if any (left in place: {@link clearCancel} once the lane ended by it). */
  mark(lane: string): CancelMark | null {
    return this.lanes.get(lane)?.mark ?? null;
  }

  /** The lane ended by its mark, or went on past it (a call cancelled that had ended already): it holds none now. */
  clearCancel(lane: string, kind: CancelMark['kind']): void {
    const state = this.lanes.get(lane);
    if (state?.mark?.kind === kind) state.mark = null;
  }

  /** A retry applied: the lane's marks go, its calls get a fresh signal, its next drive retries it. */
  retry(lane: string): void {
    const state = this.of(lane);
    state.mark = null;
    if (state.controller.signal.aborted) state.controller = new AbortController();
    state.retry = true;
  }

  /** Whether the lane's drive now is the retry the crew applied (once). */
  takeRetry(lane: string): boolean {
    const state = this.lanes.get(lane);
    if (state?.retry !== true) return false;
    state.retry = false;
    return true;
  }

  private of(lane: string): LaneState {
    let state = this.lanes.get(lane);
    if (state === undefined) this.lanes.set(lane, (state = { controller: new AbortController(), calls: 0, mark: null, retry: false }));
    return state;
  }
}
