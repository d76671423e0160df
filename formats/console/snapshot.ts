// The console's data: what a crew shows, live or after the fact, as plain JSON-safe values.

import type { LaneStory } from './lane-story.ts';

/** A supervised call of a lane that ended with a code (its result may still stand: PROVIDER_NO_EXIT). */
export interface CallCode {
  /** As the lane's story names it: a reviewer attempt's short id (a3), `observer:<call>` or `turn:<n>`. */
  readonly call: string;
  readonly kind: 'reviewer' | 'observer' | 'agent';
  readonly code: string;
}

/** One lane as the crew page lists it. */
export interface LaneView {
  readonly id: string;
  /** Its stage (queued, bootstrap, review, answer, work, cross-check, export, complete, failed, interrupted). */
  readonly state: string;
  readonly attempts: number;
  /** The lane's result code once it has one (a failure's code, or null). */
  readonly code: string | null;
  /** Why it failed or was interrupted, one line, bounded. */
  readonly detail?: string | null;
  /** What it cost so far in USD: its reviewers', observers' and agent's calls, as their streams reported it. */
  readonly costUsd?: number;
  /** Its calls that ended with no known cost (no price for their model): each counts at the crew's reservation. */
  readonly unpriced?: number;
  /** When it left the queue (ISO), null while queued. */
  readonly startedAt?: string | null;
  /** When it entered its current state (ISO). */
  readonly since?: string;
  /** Its last sign of life (ISO): a saved change or an admitted progress mark of one of its children. */
  readonly activityAt?: string;
  /** Its supervised calls that ended with a code, whatever the lane's own end (absent: none). */
  readonly calls?: readonly CallCode[];
  /** Its plan's title (the plan file's first `# ` heading, one bounded line); absent: none. */
  readonly title?: string;
  /** Its branch and head commit, for a crew with a workspace. */
  readonly branch?: string;
  readonly head?: string;
  /** Its lane check once the crew has made it: clear, or overlap with the files it shares and the lanes it shares them with. */
  readonly check?: { readonly status: 'clear' | 'overlap'; readonly files: readonly string[]; readonly with: readonly string[] };
  /** How the last merge train (crew land) ended for it, once one took it; absent: none yet. */
  readonly land?: LaneLand;
  /** A crew with `"overlap": "order"`: the earlier lanes it runs after, whose plans name these files too (absent: it waits for none). */
  readonly order?: { readonly after: readonly string[]; readonly files: readonly string[] };
}

/** A lane's outcome in the last merge train: landed at `to`, or why not (a LAND status and its code). */
export interface LaneLand {
  readonly status: string;
  readonly code: string | null;
  readonly to: string | null;
  readonly at: string;
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
 * How a crew run stands: `running` (its process lives), `done` (it ended with every lane
 * ended), `interrupted` (it ended early, by a signal, a closed output or its deadline, and
 * left lanes unfinished) or `stopped` (its process is gone and never recorded an end:
 * killed, or never run). An interrupted or stopped crew runs nothing until it is started
 * again: no lane of it is stuck, and its clock stands still.
 */
export type CrewRunState = 'running' | 'done' | 'interrupted' | 'stopped';

/** Everything the crew page shows but its lanes. */
export interface CrewHead {
  readonly crew: string;
  /** When this snapshot was taken (ISO): "quiet for" and "stuck" are measured from it. */
  readonly now: string;
  /** When the crew run started (ISO), null when the store does not know. */
  readonly startedAt: string | null;
  readonly elapsedS: number;
  readonly done: boolean;
  /** How the run stands (see {@link CrewRunState}); `done` is true for done and interrupted. */
  readonly run: CrewRunState;
  /** Where it comes from: the crew process itself, or its store read by another process. */
  readonly source: 'live' | 'store';
  readonly byState: Readonly<Record<string, number>>;
  /** Lanes ended per minute since the first lane started; null before any ended. */
  readonly lanesPerMinute: number | null;
  /**
   * Seconds until the lanes that still run (queued or in a running stage) have ended at that
   * rate; null when unknown, and while a stuck lane holds the crew or only lanes that wait
   * (for their owner, or to be continued) are left.
   */
  readonly etaS: number | null;
  /** Spent so far across the lanes, and the crew's cap (the file's per-lane cap times its lanes; null: none). */
  /**
   * The crew's spend: `capUsd` the crew-wide cap (limits.spend_cap_usd); `unpriced` calls
   * of unknown cost, each counted against the cap at `reserveUsd`.
   */
  readonly spend: { readonly usd: number; readonly capUsd: number | null; readonly unpriced?: number; readonly reserveUsd?: number };
  /** A running lane with no sign of life for longer than this is stuck. */
  readonly stuckAfterS: number;
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
  /** The command that runs the crew's failed lanes again (null: not known). */
  readonly retryCommand: string | null;
  /** The command that continues the crew's unfinished lanes, where they stopped (null: not known). */
  readonly resumeCommand: string | null;
  /** The command that answers every lane waiting for its owner (`crew answer --all`; absent or null: not known). */
  readonly answerCommand?: string | null;
}

/** The whole crew at one moment: `/snapshot.json`, and the first message of `/events`. */
export interface CrewSnapshot extends CrewHead {
  /** Every lane, in the crew file's order. */
  readonly lanes: readonly LaneView[];
}

/**
 * `/events` messages. The first is `snapshot`; each later one is a `delta`: the new head
 * and only the lanes that changed since the message numbered `from` (lanes are never
 * removed). A client applies a delta only if its own seq equals `from`, else it fetches
 * `/snapshot.json` again.
 */
export type ConsoleEvent =
  | { readonly type: 'snapshot'; readonly seq: number; readonly snapshot: CrewSnapshot }
  | { readonly type: 'delta'; readonly seq: number; readonly from: number; readonly head: CrewHead; readonly lanes: readonly LaneView[] };

/** Where the console reads a crew; `subscribe` returns the unsubscribe function. */
export interface SnapshotSource {
  snapshot(): CrewSnapshot;
  subscribe(listener: () => void): () => void;
  /** One lane's whole story, or undefined for a lane the crew does not have. */
  laneStory?(id: string): LaneStory | undefined;
}

