// One lane's whole story, as its page (`/lanes/<id>`, `/lanes/<id>.json`) and
// `crew status --lane` show it. Plain JSON-safe values, read from the store and the run
// directory; nothing in it is trusted as markup.

/** One stage the lane went through, with when it began and ended (null: still in it). */
export interface StageSpan {
  readonly stage: string;
  readonly startedAt: string;
  readonly endedAt: string | null;
}

/** One supervised call of the lane: a reviewer voice, an observer call or an agent turn. */
export interface AttemptStory {
  /** reviewer attempt id (e.g. a3), `observer:<call>` or `turn:<n>`. */
  readonly id: string;
  readonly kind: 'reviewer' | 'observer' | 'agent';
  /** native|outside for a reviewer, the QA mode for an observer, null for an agent turn. */
  readonly voice: string | null;
  /** The review phase, for a reviewer. */
  readonly phase: string | null;
  readonly model: string | null;
  /** open, completed, failed, unavailable, cancelled; or the supervision status. */
  readonly outcome: string;
  readonly code: string | null;
  readonly startedAt: string | null;
  readonly durationMs: number | null;
  readonly marks: number | null;
  /** Whether the supervisor proved the child's process tree gone. */
  readonly cleanupConfirmed: boolean | null;
  readonly costUsd: number | null;
  readonly session: string | null;
}

/** A file of the run directory, readable in the page: text only, bounded. */
export interface RunFile {
  /** Relative to the run directory, '/'-separated. */
  readonly path: string;
  readonly bytes: number;
  /** Its text up to the bound; null for a file not shown (binary, a link, unreadable). */
  readonly text: string | null;
  /** True when `text` is the first part only. */
  readonly truncated: boolean;
  /** Why text is null. */
  readonly skipped?: string;
}

export interface LaneStory {
  readonly crew: string;
  readonly lane: string;
  readonly state: string;
  readonly code: string | null;
  readonly detail: string | null;
  readonly runDir: string;
  readonly stages: readonly StageSpan[];
  readonly attempts: readonly AttemptStory[];
  /** The review as decided: per phase, its consensus, and the gate with its answer. */
  readonly review: {
    readonly status: string | null;
    readonly phases: readonly { readonly phase: string; readonly state: string; readonly native: string; readonly outside: string; readonly findings: number }[];
    readonly gate: { readonly rev: number; readonly state: string; readonly answer: string | null; readonly decisions: number } | null;
    readonly spendUsd: number | null;
  };
  /** QA: each verdict the observer gave, and the guidance carried into the next turn. */
  readonly qa: {
    readonly verdicts: readonly { readonly call: number; readonly mode: string; readonly verdict: string | null; readonly code: string | null; readonly at: string | null; readonly guidance: string | null }[];
    readonly guidance: string | null;
  };
  /** For a lane of a crew with a workspace. */
  readonly workspace: { readonly branch: string | null; readonly head: string | null; readonly worktree: string | null; readonly diffStat: string | null } | null;
  readonly costUsd: number;
  readonly files: readonly RunFile[];
  /** For a failed lane: what its code says to do, and the exact command that retries it. */
  readonly fix: string | null;
  readonly retry: string | null;
}
