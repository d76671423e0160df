// The web view's data: what a running crew shows, as plain JSON-safe values.

/** One lane as the web view lists it. */
export interface LaneView {
  readonly id: string;
  readonly state: string;
  readonly attempts: number;
  /** The lane's result code once it has one (a failure's code, or null). */
  readonly code: string | null;
}

/**
 * Everything the page shows at one moment. Sent whole on every change (never as a delta),
 * so a client that missed messages is right again with the next one.
 */
export interface CrewSnapshot {
  readonly crew: string;
  readonly elapsedS: number;
  readonly done: boolean;
  readonly lanes: readonly LaneView[];
  readonly byState: Readonly<Record<string, number>>;
  readonly attempts: { readonly running: number; readonly queued: number; readonly started: number; readonly finished: number };
  readonly marksPerSecond: number;
  readonly renewalP99Ms: number | null;
  /**
   * Renewal latency. Bucket i counts samples in (boundsMs[i-1], boundsMs[i]]; a count past
   * the last bound (counts.length === boundsMs.length + 1) counts the samples above it.
   */
  readonly histogram: { readonly boundsMs: readonly number[]; readonly counts: readonly number[] };
  /** The CREW_SUMMARY line once done. */
  readonly summary: string | null;
}

/** Where the web view reads snapshots; `subscribe` returns the unsubscribe function. */
export interface SnapshotSource {
  snapshot(): CrewSnapshot;
  subscribe(listener: () => void): () => void;
}
