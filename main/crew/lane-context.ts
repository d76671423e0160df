import type { LaneProgress } from '../../formats/crew/record.ts';
import type { SuperviseFn } from '../dispatch/dispatcher.ts';
import type { Store } from '../store/store.ts';
import type { CrewActions } from './crew-actions.ts';
import type { OrphanSettlements } from './orphan-sweep.ts';
import type { QaPort, ReviewPort } from './ports.ts';
import type { Prices } from '../providers/cost.ts';

/** The git side of agent lanes on a real repository (a crew file's `workspace`). */
export interface WorkspacePort {
  /** The lane's worktree and branch, made or found again (idempotent). */
  prepare(lane: string): Promise<{ readonly worktree: string; readonly branch: string }>;
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
   * own commits taken off the branch).
   */
  guard(worktree: string, lane: string, n: number, since: string): Promise<void>;
  /** Removes a complete lane's worktree (its branch stays). */
  remove(worktree: string): Promise<void>;
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
  /** USD per million tokens by model, for presets whose stream reports no cost. */
  readonly prices?: Prices;
  /** Failed lanes run again (crew run --retry-failed); else a failed lane is left as it is. */
  readonly retryFailed?: boolean;
  readonly cancel: AbortSignal;
  /** Orphans of a crew that died, being settled before the lanes started. */
  readonly orphans?: OrphanSettlements;
  /** Called after every saved change, for the live view and the lines. */
  readonly onChange: (progress: LaneProgress) => void;
}
