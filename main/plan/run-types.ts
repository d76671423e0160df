import type { PhaseId, VoiceId } from '../../formats/review/run-record.ts';
import type { OrphanEnd } from '../../formats/supervision/child-record.ts';
import type { RunnerConfig } from '../../formats/providers/runner.ts';
import type { Prices } from '../providers/cost.ts';
import type { PlanReport } from './report.ts';
import type { OutcomeFacts } from './voice-outcome.ts';

/** The provider's budget when the caller gives none: the lease, or the total deadline. */
export const DEFAULT_ATTEMPT_TIMEOUT_MS = 10 * 60_000;

export interface PlanRunOptions {
  readonly out: string;
  /** Needed by the first run on `out` only (it starts the review run). */
  readonly plan?: string;
  /**
   * Argv templates ({prompt} and {result} substituted inside each element, never through a
   * shell) or provider presets (the prompt on stdin, the result from the stream).
   */
  readonly native: RunnerConfig;
  readonly outside: RunnerConfig;
  readonly nativeModel: string;
  readonly outsideModel: string;
  /** The signed action that sets timeout mode and budgets. */
  readonly action: string;
  readonly actionsFile: string;
  readonly trust: string;
  /** Each provider's budget (the lease, or its total deadline); default {@link DEFAULT_ATTEMPT_TIMEOUT_MS}. */
  readonly timeoutMs?: number;
  readonly graceMs?: number;
  readonly teardownMs?: number;
  /** The whole run's budget: at expiry the children it started are cancelled and the run ends `interrupted`. */
  readonly deadlineMs?: number;
  /** The run's spend cap in USD, set by the first next (like `plan next --spend-cap`). */
  readonly spendCap?: number;
  readonly cancel?: AbortSignal;
  readonly onEvent?: (event: PlanRunEvent) => void;
  /**
   * Settlements of this run's orphans already under way (a crew starts them before any
   * lane), by attempt id: an attempt is resumed only once its settlement is journaled.
   */
  readonly orphans?: ReadonlyMap<string, Promise<unknown>>;
  /** USD per million tokens by model, for presets whose stream gives tokens but no cost. */
  readonly prices?: Prices;
}

/** One attempt's end as `plan run` saw it. */
export interface AttemptEnd {
  readonly attempt: string;
  readonly phase: PhaseId;
  readonly voice: VoiceId;
  /**
   * bound: its result bound; failed / unavailable: a typed failure; open: cancelled before
   * it started; cancelled: this run cancelled it after it started (the next run mints its
   * voice anew).
   */
  readonly state: 'bound' | 'failed' | 'unavailable' | 'open' | 'cancelled';
  /** The result code of a failure (a supervision code, a submit refusal, EXECUTION_UNKNOWN); null when bound. */
  readonly code: string | null;
  /** The supervision's facts; null for an attempt resumed from an earlier run. */
  readonly outcome: OutcomeFacts | null;
}

/**
 * Why a plan run cannot move on by itself, as facts: its phase's native voice failed (the
 * phase needs that attempt redispatched, then a plan run again), or its phase has no attempt
 * a plan run can move. The edge (main/cli/plan-stop-lines.ts) words it.
 */
export type RunStop =
  | { readonly reason: 'native_failed'; readonly phase: PhaseId; readonly attempt: string; readonly state: 'failed' | 'unavailable'; readonly code: string | null }
  | { readonly reason: 'nothing_to_move'; readonly phase: PhaseId | null };

export type PlanRunEvent =
  | { readonly type: 'report'; readonly command: 'next' | 'submit' | 'fail'; readonly report: PlanReport }
  | { readonly type: 'dispatched'; readonly attempt: string; readonly phase: PhaseId; readonly voice: VoiceId }
  | { readonly type: 'outcome'; readonly attempt: string; readonly phase: PhaseId; readonly voice: VoiceId; readonly outcome: OutcomeFacts }
  | { readonly type: 'resumed'; readonly attempt: string; readonly phase: PhaseId; readonly voice: VoiceId; readonly result: boolean }
  | {
      readonly type: 'orphan';
      readonly attempt: string;
      readonly phase: PhaseId;
      readonly voice: VoiceId;
      /** The child a driver that died left (null: it never spawned one). */
      readonly pid: number | null;
      readonly how: OrphanEnd['how'] | 'never_started';
      readonly code: string | null;
      readonly cleanup: boolean;
    }
  | { readonly type: 'interrupted'; readonly reason: 'deadline' | 'cancel' }
  | { readonly type: 'stopped'; readonly stop: RunStop };

/** The final report (the run as the store holds it), with what this run did. */
export interface PlanRunReport extends PlanReport {
  /** Every attempt this run ended, in the order they ended. */
  readonly ends: readonly AttemptEnd[];
  /** Why the run stopped early: the deadline, or a cancel (a signal); null when it did not. */
  readonly interrupted: 'deadline' | 'cancel' | null;
  /** Set when the run cannot move on by itself (a native voice failed). */
  readonly stopped: RunStop | null;
}
