import type { RunnerConfig } from '../../formats/providers/runner.ts';
import type { LaneSpec } from '../../formats/crew/file.ts';
import type { CallEvidence } from '../../formats/crew/record.ts';

/**
 * What a lane needs from the review runs and from the QA service, as plain data: the
 * lane driver decides the order, these do the work. A step never throws for an
 * outcome (a failed voice, a refused completion): it says so in its result.
 */
export interface StepResult {
  readonly ok: boolean;
  /** A result code when not ok (the first cause). */
  readonly code: string | null;
  readonly detail: string | null;
  /** Supervised children the step started. */
  readonly attempts: number;
  /** The supervised call it failed on (a reviewer's or an observer's), with its exit status or signal and stderr's end; absent: none. */
  readonly call?: CallEvidence;
}

export interface ReviewStep extends StepResult {
  /** The run's terminal status after the step (gate_pending, complete, interrupted...). */
  readonly status: string;
}

export interface ReviewPort {
  /**
   * Drives the lane's review run to its gate (or to its end); resumes a started run.
   * `onSpawn` is awaited at each child's spawn (the lane counts it then, durably); the
   * step's `attempts` counts the same children. `retry`: the lane failed and is retried,
   * so a failed native voice is minted anew.
   */
  drive(lane: LaneSpec, runDir: string, options?: { readonly retry?: boolean; readonly onSpawn?: () => Promise<void> }): Promise<ReviewStep>;
  /** Answers the pending gate by the crew's answer policy; a decided gate is left alone. */
  answer(runDir: string): Promise<ReviewStep>;
  /** Whether the lane's gate no longer waits for an answer (a lane parked for its owner goes on then). */
  gateDecided?(runDir: string): boolean;
  /** Exports and validates the run directory. */
  export(runDir: string): Promise<ReviewStep>;
}

export interface QaStep extends StepResult {
  /** Guidance the observer gave (a failed cadence or cross-check), for the agent's next prompt. */
  readonly guidance: string | null;
  /** The lines the QA machine emitted, in order. */
  readonly lines: readonly string[];
  /** What the step's observer calls cost, from their streams (claude's figure, others' tokens at the prices). */
  readonly usd?: number;
  /** Its observer calls that ran and whose cost is unknown (no price for their model, or not a preset). */
  readonly unpriced?: number;
}

/** The lane's QA state machine, hosted by the crew's QA service thread. */
export interface QaPort {
  /** Records the lane if new and bootstraps its observer; a lane already ready is left alone. */
  start(lane: string, observer: RunnerConfig): Promise<QaStep>;
  /** `key` names the turn: a turn whose key the lane already holds is not recorded again. */
  turn(lane: string, role: 'user' | 'assistant', text: string, diff: boolean, key?: string): Promise<QaStep>;
  /** finish_success: the cross-check; ok only when it passed. */
  finish(lane: string): Promise<QaStep>;
  /** The lane ended without completing: clear its history, a final review request if diffs remain. */
  stop(lane: string): Promise<QaStep>;
}
