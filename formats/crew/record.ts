import type { ChildRecord } from '../supervision/child-record.ts';
import type { TurnEnd, CallEvidence, SandboxRefusal, TurnCall } from './turn-evidence.ts';

export type { TurnEnd, CallEvidence, SandboxRefusal, TurnCall } from './turn-evidence.ts';
export { withSandboxRefusal, withTurnCall, exitText, stderrSuffix, withTurnEnd, TURN_CALLS, TURN_ENDS } from './turn-evidence.ts';

/** Where a lane is in its life; the last three are terminal. */
export const LANE_STAGES = ['queued', 'bootstrap', 'review', 'answer', 'work', 'pregate', 'cross-check', 'export', 'complete', 'failed', 'interrupted'] as const;
export type LaneStage = (typeof LANE_STAGES)[number];

/** The code a lane parked at its gate carries: the crew's answer policy is `owner`, and the owner has not answered yet. */
export const OWNER_PENDING = 'CREW_OWNER_PENDING';

/**
 * Whether a lane waits at its gate for the owner's answer: saved as interrupted in its
 * answer stage (its agent not started), so a crew started again after the answer, or the
 * running crew once it sees it, continues it from there like any interrupted lane.
 */
export function isOwnerWaiting(progress: Pick<LaneProgress, 'stage' | 'stoppedIn' | 'code'>): boolean {
  return progress.stage === 'interrupted' && progress.stoppedIn === 'answer' && progress.code === OWNER_PENDING;
}

export function isTerminalStage(stage: LaneStage): boolean {
  return stage === 'complete' || stage === 'failed' || stage === 'interrupted';
}

/**
 * One lane's progress, as the store keeps it under [crew, lane]. A turn is journaled as
 * dispatched before its agent starts, so a crew started again never runs it twice; it
 * ingests the turn's result instead.
 */
export interface LaneProgress {
  readonly crew: string;
  readonly lane: string;
  stage: LaneStage;
  runDir: string;
  /** Agent turns handed to the pool, and those whose result was ingested. */
  turnsDispatched: number;
  turnsDone: number;
  /**
   * Turns dispatched before a crash whose result was missing or unreadable when the crew
   * started again: never re-run, recorded with QA as diff-bearing turns of unknown content.
   */
  lostTurns: number[];
  /** The last guidance the observer gave, carried into the agent's next prompt. */
  guidance: string | null;
  /** Supervised children this lane started (reviewers, observers, agent turns): spawned, not merely queued. */
  attempts: number;
  /**
   * The child of the last agent turn dispatched, journaled at its spawn (null from the
   * dispatch until then): a crew started after this one died finds it still running.
   */
  turnChild?: ChildRecord | null;
  /**
   * Agent turns whose supervised call ended with a code, in turn order (the last
   * {@link TURN_ENDS} kept): PROVIDER_NO_EXIT for a turn whose result stood though its
   * CLI had to be torn down, a failure's code. The lane's story keeps each one, after a
   * retry cleared the lane's own code too. Absent on lanes saved before it was kept.
   */
  turnEnds?: TurnEnd[];
  /**
   * Each agent turn's supervised call as it ended (the last {@link TURN_CALLS} kept): its
   * exit status or signal, the end of its stderr, how long it ran, its marks, cost and
   * session. Absent on lanes saved before it was kept.
   */
  turnCalls?: TurnCall[];
  /**
   * Agent turns whose sandbox refused writes, or during which the repository's refs moved
   * (other than the crew run's own lane branches): what each turn was refused or did.
   * Absent while none was.
   */
  sandboxRefusals?: SandboxRefusal[];
  /**
   * The call the lane failed on, with its evidence (exit status or signal, the end of its
   * stderr): what the lane's line, page and JSON show beside its code. Null once retried.
   */
  failedCall?: CallEvidence | null;
  /** The stage an interrupted or failed lane stopped in: where a crew started again (or a retry) resumes it. */
  stoppedIn: LaneStage | null;
  /** Turns taken before the lane's last retry: a retried lane has its whole turn budget again. */
  turnBase?: number;
  /** The agent's provider session (a preset's), continued by every later turn. */
  session?: string | null;
  /** What the lane's preset calls cost so far, in USD, as their streams reported it (agent turns). */
  agentUsd?: number;
  /** What the lane's observer calls cost so far, in USD, from their streams (claude's figure, others' tokens at the prices). */
  observerUsd?: number;
  /**
   * Agent turns and observer calls of the lane that ended with no known cost (no price for
   * their model, or not a preset); its reviewers' are in its run's ledger (unknown_n).
   */
  unpriced?: number;
  /** The agent session's cost as its stream last reported it (a session total, for presets that report one). */
  sessionUsd?: number | null;
  /** The lane's worktree, branch and the head commit of its last diff-bearing turn (a crew with a workspace). */
  worktree?: string | null;
  branch?: string | null;
  head?: string | null;
  /**
   * The value of LANEWARD_PREGATE in the environment of every pregate check the lane runs,
   * saved before the first one starts: a crew started after this one died finds a check
   * still running by it (whether or not its spawn was ever seen) and tears it down.
   */
  pregateTag?: string | null;
  /**
   * Why a complete lane went back to its agent (`crew run` after a merge train refused or
   * could not bring it onto the base), and how far its way back got; kept once it is
   * complete again, until the next reopen. Absent: never reopened.
   */
  reopen?: LaneReopen | null;
  /** The tree id the lane's last pregate passed at (its head's tree), for its receipt; absent: none passed. */
  pregateTree?: string | null;
  /** The stages it entered, in order, each with when (the last {@link STAGE_HISTORY} kept; absent on lanes saved before it was kept). */
  stages?: StageMark[];
  /** Why the lane failed or was interrupted. */
  code: string | null;
  detail: string | null;
  updatedAt: string;
}

/** A lane taken back to its agent after the merge train: what the train said and what laneward brought in. */
export interface LaneReopen {
  /** The train's code: RECEIPT_CARRY_PRODUCT_CHANGED or LAND_CONFLICT. */
  readonly code: string;
  /** The base branch's name, and its tip when the lane was reopened: what is merged into the lane. */
  readonly branch: string;
  readonly base: string;
  /** The lane's head the train refused (its receipt's). */
  readonly from: string;
  /** True once the base is merged into the worktree (uncommitted, conflicts marked) and the guidance saved. */
  readonly merged: boolean;
  /** The files the merge left in conflict (LAND_CONFLICT), as git named them. */
  readonly conflicts: readonly string[];
}

/** One stage a lane entered, and when. */
export interface StageMark {
  readonly stage: LaneStage;
  readonly at: string;
}

/** Stage marks a lane keeps: a lane retried many times keeps its latest story. */
export const STAGE_HISTORY = 64;

/** Records that the lane is in its current stage from `at`, unless that is already its last mark. */
export function markStage(progress: LaneProgress, at: string): void {
  const stages = (progress.stages ??= []);
  if (stages[stages.length - 1]?.stage === progress.stage) return;
  stages.push({ stage: progress.stage, at });
  if (stages.length > STAGE_HISTORY) stages.splice(0, stages.length - STAGE_HISTORY);
}

export function newLane(crew: string, lane: string, runDir: string, now: string): LaneProgress {
  return { crew, lane, stage: 'queued', runDir, turnsDispatched: 0, turnsDone: 0, lostTurns: [], guidance: null, attempts: 0, stoppedIn: null, code: null, detail: null, updatedAt: now };
}

/**
 * A failed lane made ready to run again, as new attempts (nothing it started is ever
 * replayed): a lane that failed exporting exports again; any other starts over from its
 * observer's bootstrap (its QA history was cleared when it failed), through the review and
 * answer it already has, with the whole agent turn budget again; its turns keep their
 * numbers, so no turn file is reused. Null for a lane that did not fail.
 */
export function retryLane(progress: LaneProgress, now: string): LaneProgress | null {
  if (progress.stage !== 'failed') return null;
  return startedAgain(progress, progress.stoppedIn === 'export' ? 'export' : 'bootstrap', now);
}

/**
 * What a lane run again keeps and drops: its end (code, detail, failed call, guidance)
 * cleared, and the turns it dispatched closed, so it starts new turns and never ingests
 * one of them again, with the whole agent turn budget from there.
 */
function startedAgain(progress: LaneProgress, stage: LaneStage, now: string): LaneProgress {
  return {
    ...progress,
    stage,
    stoppedIn: null,
    code: null,
    detail: null,
    failedCall: null,
    guidance: null,
    turnsDone: progress.turnsDispatched,
    turnBase: progress.turnsDispatched,
    updatedAt: now,
  };
}

/**
 * A complete lane made ready to go back to its agent after the merge train: from its
 * observer's bootstrap (its QA closed when its cross-check passed) straight to work (its
 * review is done), with the whole agent turn budget again, a new pregate and receipt at
 * its end. Its turns keep their numbers, so the first turn back is a new prompt, never one
 * sent before. Null for a lane that is not complete.
 */
export function reopenLane(progress: LaneProgress, reopen: Omit<LaneReopen, 'merged' | 'conflicts'>, now: string): LaneProgress | null {
  if (progress.stage !== 'complete') return null;
  return { ...startedAgain(progress, 'bootstrap', now), pregateTree: null, reopen: { ...reopen, merged: false, conflicts: [] } };
}

/** The process that runs a crew: one at a time per crew and state root. */
export interface CrewDriver {
  readonly pid: number;
  /** Its start tick (/proc/<pid>/stat field 22), so a reused pid is not taken for it. */
  readonly ticks: string;
  readonly since: string;
  /** The crew applies operators' lane requests (crew retry|cancel): a crew run in one process; absent for a queued crew. */
  readonly laneControl?: boolean;
}

/**
 * A crew's latest run as the console reads it after the fact: when it started, and once it
 * ended how (its summary line and the live figures of its last moment). Written when the
 * run starts and again when it ends; a run killed in between has no end.
 */
export interface CrewRunRecord {
  readonly crew: string;
  /**
   * The crew run's id, minted at its first start on this state root and kept by every
   * later one: its lanes' branches are `laneward/<crew>/<run id>/<lane>`. Absent on
   * records saved before it was kept.
   */
  readonly runId?: string;
  /** The crew file, as given. */
  readonly file: string;
  readonly startedAt: string;
  readonly endedAt: string | null;
  readonly summary: string | null;
  readonly stoppedBy: string | null;
  /** The command that runs its failed lanes again. */
  readonly retryCommand: string;
  /** The crew-wide spend cap (limits.spend_cap_usd) over every call of every lane. */
  readonly capUsd: number | null;
  /** What a call of unknown cost counts against the cap (limits.reserve_usd). */
  readonly reserveUsd?: number;
  readonly stuckAfterS: number;
  /** The live view's last figures: supervision, rate-limited providers. */
  readonly final: {
    readonly attempts: { readonly running: number; readonly queued: number; readonly started: number; readonly finished: number };
    readonly renewalP99Ms: number | null;
    readonly histogram: { readonly boundsMs: readonly number[]; readonly counts: readonly number[] };
    readonly providers: readonly { readonly provider: string; readonly pausedUntil: string | null; readonly allowance: number | null; readonly running: number; readonly rateLimits: number }[];
  } | null;
}
