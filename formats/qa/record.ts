import type { PresetRunner } from '../providers/runner.ts';
import type { ChildRecord } from '../supervision/child-record.ts';
import type { ToolClass } from '../supervision/tool-policy.ts';

/** The three kinds of observer call; each has its own tool policy and frame label. */
export const QA_MODES = ['bootstrap', 'cadence', 'cross-check'] as const;
export type QaMode = (typeof QA_MODES)[number];

/**
 * The tool policy of each mode: bootstrap is a read-only scan (read files, search the
 * web), cadence is limited to search (the delta comes in the prompt), the cross-check
 * is a full audit (every tool, shell and writes included).
 */
export const QA_TOOL_POLICY: Readonly<Record<QaMode, readonly ToolClass[]>> = {
  bootstrap: ['read', 'search'],
  cadence: ['search'],
  'cross-check': ['read', 'search', 'shell', 'write', 'other'],
};

/** The roles a turn may have; reasoning is counted, never stored or forwarded. */
export const TURN_ROLES = ['user', 'assistant', 'reasoning'] as const;
export type TurnRole = (typeof TURN_ROLES)[number];

/**
 * One user or assistant turn, in arrival order; `index` is its position in `turns`. The
 * text is dropped (null) once the observer received it: nothing needs it again, and the
 * record stays small.
 */
export interface Turn {
  readonly index: number;
  readonly role: 'user' | 'assistant';
  text: string | null;
  readonly diff: boolean;
  /** The caller's name for the turn (a crew's agent turn), so it is never recorded twice. */
  readonly key?: string;
}

/** How the lane runs its observer: an argv template and the signed action that bounds it. */
export interface ObserverConfig {
  /** argv with `{prompt}` and `{result}` substituted per element; never a shell. */
  readonly argv: readonly string[];
  /** A provider preset instead of the argv (then empty): its CLI reads the prompt on stdin. */
  readonly preset?: PresetRunner;
  readonly actionsFile: string;
  readonly trust: string;
  readonly action: string;
  readonly timeoutMs: number;
}

/** One exchange with the observer: what it was sent and what it answered. */
export interface Exchange {
  readonly call: number;
  readonly mode: QaMode;
  /** Turn indexes [from, to) sent as the delta; from === to when none. */
  readonly from: number;
  readonly to: number;
  /** `pass`/`fail`, or the code of a call that gave no verdict. */
  readonly verdict: 'pass' | 'fail' | 'error';
  readonly code: string | null;
  readonly note: string;
  readonly guidance: string | null;
}

/** One frame of the observer's own output (thinking, progress, tool use), labelled by mode. */
export interface Frame {
  readonly call: number;
  readonly mode: QaMode;
  readonly kind: 'thinking' | 'text' | 'tool' | 'line';
  readonly text: string;
}

/** Turn indexes [from, to). */
export type TurnRange = readonly [number, number];

/**
 * A delta handed to an observer call whose end is not recorded yet: the call, the turns
 * it was given, and the process that runs it (pid and start tick). A reservation whose
 * process is gone was never judged: the next decision gives its turns out again.
 */
export interface Reservation {
  readonly call: number;
  readonly mode: QaMode;
  readonly ranges: readonly TurnRange[];
  readonly owner: { readonly pid: number; readonly ticks: string };
  /**
   * The call's directory under qa/<lane>/ (prompt, stream, result), named when the call is
   * decided, before its observer is spawned: it is kept until the call's end is recorded,
   * so a later process can read what the observer wrote. Absent in older records.
   */
  readonly dir?: string;
  /** The observer's process, journaled right after its spawn: a later process adopts it while it runs. */
  readonly child?: ChildRecord;
}

/** A lane's QA state, one CBOR record in the `lanes` db. */
export interface LaneRecord {
  readonly version: 1;
  readonly lane: string;
  /** The next journal sequence number. */
  seq: number;
  state: 'active' | 'stopped' | 'complete';
  /** Bumped by every stop and reset: a call that began before one finds its history gone and is discarded. */
  epoch: number;
  observer: ObserverConfig;
  /** Set by a passing bootstrap; cadence is paused while false. */
  ready: boolean;
  /** Observer calls made so far (the call number of the latest). */
  calls: number;
  /** User and assistant turns since the last stop/reset. */
  turns: Turn[];
  /** Reasoning turns seen since the last stop/reset: counted only. */
  reasoningTurns: number;
  /**
   * Turns [0, lastSent) were handed to an observer call: a call reserves its delta when it
   * is decided ({@link reserved}), and it is given out again only if its observer never
   * ran or its process died before recording the call's end.
   */
  lastSent: number;
  /**
   * The deltas of calls still running, or whose process died before recording their end
   * (absent in records written before these were kept: none open then).
   */
  reserved?: Reservation[];
  /** Turns (user and assistant) since the last cadence check. */
  sinceCadence: number;
  /** Diff-bearing turns since the last review request, and their indexes. */
  unreviewedDiffs: number[];
  /** The observer transcript; `bootstrapLen` is its length once bootstrap passed. */
  transcript: Exchange[];
  bootstrapLen: number | null;
  frames: Frame[];
}

/** A lane's state as `qa status` shows it: counts, never the turns' text. */
export interface LaneStatus {
  readonly lane: string;
  readonly state: LaneRecord['state'];
  readonly ready: boolean;
  readonly calls: number;
  readonly turns: number;
  readonly reasoningTurns: number;
  readonly lastSent: number;
  readonly unsent: number;
  readonly sinceCadence: number;
  readonly unreviewedDiffs: readonly number[];
  readonly exchanges: number;
  readonly bootstrapLen: number | null;
  readonly frames: Readonly<Record<QaMode, number>>;
  readonly epoch: number;
  readonly journal: number;
}

