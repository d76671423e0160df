// One lane's whole story, as its page (`/lanes/<id>`, `/lanes/<id>.json`) and
// `crew status --lane` show it. Plain JSON-safe values, read from the store and the run
// directory; nothing in it is trusted as markup.

import type { CallEvidence } from '../crew/record.ts';

/** One stage the lane went through, with when it began and ended (null: still in it). */
export interface StageSpan {
  readonly stage: string;
  readonly startedAt: string;
  readonly endedAt: string | null;
  /** endedAt - startedAt; null while the lane is still in it. */
  readonly durationMs: number | null;
}

/** One supervised call of the lane: a reviewer voice, an observer call or an agent turn. */
export interface AttemptStory {
  /** The reviewer attempt's short id (a3, as its files name it), `observer:<call>` or `turn:<n>`. */
  readonly id: string;
  readonly kind: 'reviewer' | 'observer' | 'agent';
  /** native|outside (carry-check for a gate's carry check) for a reviewer, the QA mode for an observer, null for an agent turn. */
  readonly voice: string | null;
  /** The review phase, for a reviewer. */
  readonly phase: string | null;
  readonly model: string | null;
  /**
   * A reviewer: open, completed, failed, unavailable, cancelled or released (its
   * attempt's state). An observer: completed (it gave a verdict) or failed. An agent turn:
   * open, completed (its result was read), failed, interrupted or lost (dispatched before
   * a crash, its end never seen).
   */
  readonly outcome: string;
  readonly code: string | null;
  /** Why it failed, or what it said (an agent turn's first line, an observer's note), bounded. */
  readonly detail: string | null;
  readonly startedAt: string | null;
  readonly durationMs: number | null;
  readonly marks: number | null;
  /** Whether the supervisor proved the child's process tree gone. */
  readonly cleanupConfirmed: boolean | null;
  /** Its own cost when recorded (a reviewer's); agent turns' spend is the lane's `agent.costUsd`. */
  readonly costUsd: number | null;
  readonly session: string | null;
  /**
   * How its child ended: its own exit status (128 + n for a signal), the signal, and the
   * last lines of its stderr (escaped, bounded), where its record kept them (absent or
   * null on records kept before they were, and for a call that never ran a child).
   */
  readonly exitCode?: number | null;
  readonly signal?: string | null;
  readonly stderr?: readonly string[];
}

/** Why a run directory file's text is not shown. */
export type RunFileSkip = 'symlink' | 'special' | 'linked' | 'binary' | 'unreadable' | 'outside' | 'budget';

/** A file of the run directory, readable in the page: text only, bounded. */
export interface RunFile {
  /** Relative to the run directory, '/'-separated. */
  readonly path: string;
  readonly bytes: number;
  /** Its text up to the bound; null for a file not shown (see `skipped`). */
  readonly text: string | null;
  /** True when `text` is the first part only. */
  readonly truncated: boolean;
  /**
   * Why text is null: a symlink (never followed), not a regular file (a FIFO, a socket, a
   * device: never opened), a file with more than one link (a hard link may be a name for a
   * file outside the run directory: never read), binary (a NUL byte or invalid UTF-8), unreadable, resolving
   * outside the run directory, or the page's text budget spent on the files before it.
   */
  readonly skipped?: RunFileSkip;
}

/** One phase of the review as decided. */
export interface PhaseStory {
  readonly phase: string;
  /** waiting, open or closed. */
  readonly state: string;
  /** Each voice's status: pending, running, completed, unavailable or failed. */
  readonly native: string;
  readonly outside: string;
  /** Findings of the results each voice stands on (both voices together). */
  readonly findings: number;
  /** The consensus of a closed phase: how the outside voice's findings fared against the native one's. */
  readonly consensus: {
    readonly coverage: string;
    readonly confirmed: number;
    readonly unverified: number;
    readonly disagree: number;
    readonly new: number;
    readonly nativeOnly: number;
  } | null;
}

/** The review's latest gate, and the answer given to it. */
export interface GateStory {
  readonly rev: number;
  /** pending until every item is answered, then answered. */
  readonly state: 'pending' | 'answered';
  readonly items: number;
  /** Items answered. */
  readonly decisions: number;
  /** The reply that answered it (a crew answers every item with one), and who gave it and when. */
  readonly answer: string | null;
  readonly by: string | null;
  readonly at: string | null;
  /** Each answered item: the option chosen and whether that approved, overrode or rejected it. */
  readonly choices: readonly { readonly item: string; readonly chosen: string; readonly status: string }[];
}

/** One verdict of the lane's observer (or a call of it that gave none). */
export interface QaVerdictStory {
  readonly call: number;
  /** bootstrap, cadence or cross-check. */
  readonly mode: string;
  /** pass or fail; null for a call that gave no usable verdict (its code says why). */
  readonly verdict: string | null;
  readonly code: string | null;
  /** When the verdict was recorded; null on journals kept before this was. */
  readonly at: string | null;
  readonly guidance: string | null;
}

export interface LaneStory {
  readonly crew: string;
  readonly lane: string;
  /** Its plan's title (the plan file's first `# ` heading, one bounded line); absent: none. */
  readonly title?: string;
  readonly state: string;
  readonly code: string | null;
  readonly detail: string | null;
  readonly runDir: string;
  /** The lane's last saved change (ISO); null before it was first saved. */
  readonly updatedAt: string | null;
  /** The lane's review run id, once its run directory is bound to one. */
  readonly run: string | null;
  /** Its lane id in the QA store. */
  readonly qaLane: string;
  readonly stages: readonly StageSpan[];
  /** Reviewer attempts (mint order), observer calls (call order), agent turns (turn order). */
  readonly attempts: readonly AttemptStory[];
  /** The review as decided: per phase, its consensus, and the gate with its answer. */
  readonly review: {
    /** The run's state (awaiting_result, gate_pending, complete...); null before it started. */
    readonly status: string | null;
    readonly phases: readonly PhaseStory[];
    readonly gate: GateStory | null;
    readonly spendUsd: number | null;
  };
  /** QA: each verdict the observer gave, and the guidance carried into the next turn. */
  readonly qa: {
    readonly verdicts: readonly QaVerdictStory[];
    readonly guidance: string | null;
  };
  /** The agent's turns and what they cost, as the lane's progress records them. */
  readonly agent: {
    readonly turnsDispatched: number;
    readonly turnsDone: number;
    /** Turns dispatched before a crash whose end was never seen. */
    readonly lostTurns: readonly number[];
    readonly session: string | null;
    /** What its preset calls cost so far, and the session's own running total where its stream reports one. */
    readonly costUsd: number | null;
    readonly sessionUsd: number | null;
  };
  /** For a lane of a crew with a workspace. */
  readonly workspace: {
    readonly branch: string | null;
    readonly head: string | null;
    readonly worktree: string | null;
    /** `git diff --shortstat <base> <head>`; null when not asked for or unavailable. */
    readonly diffStat: string | null;
  } | null;
  /** Review spend plus agent spend, in USD. */
  readonly costUsd: number;
  /** The run directory's files, sorted by path, bounded (see `filesLeftOut`). */
  readonly files: readonly RunFile[];
  /** Files past the listing's bound; `exact` false when the walk itself stopped at its bound. */
  readonly filesLeftOut: { readonly count: number; readonly exact: boolean };
  /** For a failed or interrupted lane: the fix clause of its code (null for a code without one). */
  readonly fix: string | null;
  /** For a failed lane: the exact command that retries it. */
  readonly retry: string | null;
  /**
   * For a lane that failed on a supervised call: that call with its exit status or signal
   * and the end of its stderr (absent from stories told before it was kept).
   */
  readonly failedCall?: CallEvidence | null;
  /**
   * A lane with an agent turn in flight: its child as journaled at its spawn (pid, when,
   * its total deadline or null under a lease) and the lane's last saved change.
   */
  /**
   * A lane parked at its gate for its owner (answer: owner): its owner brief (<run>/brief.md,
   * null when it could not be written) and the command that answers it; null otherwise.
   */
  readonly owner?: { readonly waiting: true; readonly brief: string | null; readonly answer: string | null } | null;
  readonly running?: {
    readonly call: string;
    readonly pid: number;
    readonly since: string;
    readonly deadlineAt: string | null;
    readonly mode: string;
    /** Its last admitted progress mark the crew's own view saw (5 s resolution); null where no mark was seen, or read from another process. */
    readonly lastMarkAt?: string | null;
    /** Under a lease: when it expires unless a mark comes (the last mark seen, else the spawn, plus limits.timeout_ms); null otherwise. */
    readonly leaseDeadlineAt?: string | null;
  } | null;
  /**
   * For an interrupted lane, or one in flight when its crew's process is gone: the exact
   * command that continues it where it stopped (null otherwise, or not known; absent from
   * stories told before it was).
   */
  readonly resume?: string | null;
}
