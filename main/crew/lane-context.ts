import type { LaneProgress, LaneReopen } from '../../formats/crew/record.ts';
import type { SuperviseFn } from '../dispatch/dispatcher.ts';
import type { Store } from '../store/store.ts';
import type { CrewActions } from './crew-actions.ts';
import type { OrphanSettlements } from './orphan-sweep.ts';
import type { QaPort, ReviewPort } from './ports.ts';
import type { Prices } from '../providers/cost.ts';
import type { LaneCancels } from './lane-cancels.ts';
import type { LaneSandbox } from '../sandbox/lane-sandbox.ts';

/** The git side of agent lanes on a real repository (a crew file's `workspace`). */
export interface WorkspacePort {
  /**
   * The lane's worktree and branch, made or found again (idempotent): `branch` is the one
   * the lane's record names (null for a lane not prepared yet: a branch of this crew run).
   */
  prepare(lane: string, branch: string | null): Promise<{ readonly worktree: string; readonly branch: string }>;
  /** Whether the worktree holds changes since `since` (a commit; null: its head), committed by the agent or not. */
  changed(worktree: string, since: string | null): Promise<boolean>;
  /** Commits everything as the lane's turn `n`; the new head, or null when nothing changed. */
  commit(worktree: string, lane: string, n: number): Promise<string | null>;
  /** The worktree's head commit: the tip of the lane's branch, which {@link guard} checks it is on. */
  head(worktree: string): Promise<string>;
  /**
   * Refuses turn `n` before anything of it is committed when the worktree has left the
   * lane's branch (WORKSPACE_FAILED) or the turn adds more than the crew's limits allow
   * since the lane's last head `since` (WORKSPACE_TOO_LARGE, the file named; the agent's
   * own commits taken off the branch). What `known` commits hold (the base a lane back
   * from the merge train had merged in) is not the turn's.
   */
  guard(worktree: string, lane: string, n: number, since: string, branch: string | null, known?: readonly string[]): Promise<void>;
  /** Removes a complete lane's worktree (its branch stays). */
  remove(worktree: string): Promise<void>;
}

/** A lane's way from done to landed: the repository's checks at its head, then its receipt. */
export interface LandPort {
  /**
   * Runs the pregate at the lane's head (pregate.json, a PREGATE line); a failed one says
   * what to tell the agent. `journal` saves the tag its checks carry before any starts,
   * so a crew started after this one died finds and tears down what it left running.
   */
  pregate(lane: string, progress: LaneProgress, journal: (tag: string) => Promise<void>): Promise<{ readonly passed: boolean; readonly head: string; readonly tree: string; readonly guidance: string | null; readonly detail: string }>;
  /** Writes the receipt bound to the lane's head (ship-run.json, SHIP_RECEIPT and GSTACK_RESULT lines); QUEUE_RECEIPT_STALE when its branch moved. */
  receipt(lane: string, progress: LaneProgress): Promise<void>;
  /**
   * Why a complete lane goes back to its agent: the merge train refused it
   * (RECEIPT_CARRY_PRODUCT_CHANGED) or met a conflict (LAND_CONFLICT) at the head its
   * receipt still names on its branch, and the base moved past it; null: it stays complete.
   */
  reopenable(lane: string, progress: LaneProgress): Promise<Omit<LaneReopen, 'merged' | 'conflicts'> | null>;
  /** The LANE_REOPEN line, once the reopened lane is saved. */
  reopened(lane: string, reopen: Omit<LaneReopen, 'merged' | 'conflicts'>): void;
  /** The base merged into the lane's worktree, uncommitted (idempotent); the conflicts left and the agent's guidance. */
  bringBase(worktree: string, reopen: LaneReopen): Promise<{ readonly conflicts: string[]; readonly guidance: string }>;
}

/** Everything a lane driver shares with the other lanes of its crew. */
export interface LaneContext {
  readonly crew: string;
  readonly out: string;
  readonly store: Store;
  readonly actions: CrewActions;
  readonly review: ReviewPort;
  readonly qa: QaPort;
  readonly supervise: SuperviseFn;
  readonly agentTurns: number;
  /** Agent lanes work in worktrees of this repository; absent: in the crew's directory. */
  readonly workspace?: WorkspacePort;
  /** The crew's pregate and receipts (a crew file with a workspace and a `pregate`); absent: lanes end at their export. */
  readonly land?: LandPort;
  /** The crew's sandbox for its agents in worktrees (a crew with a workspace); absent: none is asked about. */
  readonly sandbox?: LaneSandbox;
  /** USD per million tokens by model, for presets whose stream reports no cost. */
  readonly prices?: Prices;
  /** Failed lanes run again (crew run --retry-failed); else a failed lane is left as it is. */
  readonly retryFailed?: boolean;
  readonly cancel: AbortSignal;
  /** Orphans of a crew that died, being settled before the lanes started. */
  readonly orphans?: OrphanSettlements;
  /** Called after every saved change, for the live view and the lines. */
  readonly onChange: (progress: LaneProgress) => void;
  /** Operators' cancels and retries of single lanes (crew cancel|retry), where the crew applies them. */
  readonly cancels?: Pick<LaneCancels, 'mark' | 'clearCancel' | 'takeRetry'>;
}
