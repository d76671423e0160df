// The web view's data: what a running crew shows, as plain JSON-safe values.

/** One lane as the web view lists it. */
export interface LaneView {
  readonly id: string;
  readonly state: string;
  readonly attempts: number;
  /** The lane's result code once it has one (a failure's code, or null). */
  readonly code: string | null;
  /** What its agent's preset calls cost, in USD, when a stream reported it. */
  readonly agentUsd?: number;
  /** Its branch, for a crew with a workspace. */
  readonly branch?: string;
}

/** A provider a rate limit held back (PROVIDER_RATE_LIMITED): paused until a time, then admitted gradually. */
export interface ProviderPause {
  readonly provider: string;
  /** ISO time until which no new call of it starts; null once the pause has passed. */
  readonly pausedUntil: string | null;
  /** Calls of it that may run at once while it is admitted gradually; null: no limit any more. */
  readonly allowance: number | null;
  readonly running: number;
  readonly rateLimits: number;
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
  /** Providers rate limits held back (empty when none was). */
  readonly providers: readonly ProviderPause[];
  /** The CREW_SUMMARY line once done. */
  readonly summary: string | null;
}

/** Where the web view reads snapshots; `subscribe` returns the unsubscribe function. */
export interface SnapshotSource {
  snapshot(): CrewSnapshot;
  subscribe(listener: () => void): () => void;
}
