import type { AttemptRecord } from '../../formats/review/run-record.ts';
import type { SuperviseFn } from '../dispatch/dispatcher.ts';
import { dispatchAttempt } from './attempt-dispatch.ts';
import { locateRun } from './locate.ts';
import { planNext } from './next.ts';
import { readBinding } from './run-binding.ts';
import { roundOf } from './run-round.ts';
import { openSession, type RunSession } from './run-session.ts';
import type { PlanRunOptions, PlanRunReport, RunStop } from './run-types.ts';
import { claimRun, type ReleaseRun } from './run-driver.ts';
import type { PlanEnv } from './settings.ts';
import { planStatus } from './status.ts';

export { DEFAULT_ATTEMPT_TIMEOUT_MS, type AttemptEnd, type PlanRunEvent, type PlanRunOptions, type PlanRunReport, type RunStop } from './run-types.ts';

/**
 * `plan run`: drives the review run to its gate. Each round: `plan next`; every open
 * attempt of the open phase is supervised through `supervise` (both voices at once, each under
 * the signed action's timeout mode); an ok outcome's result file is submitted, any other
 * end (a failure, a timeout, a refused result) closes that voice as a typed failure in the
 * journal, never retried. It stops at gate_pending, complete or reviewed; interrupted on
 * the deadline or a cancel (the children it started are cancelled); or stopped when a
 * native voice failed (the phase needs `plan next --redispatch`).
 *
 * Resuming: an attempt is marked dispatched (journal `attempt_dispatched`) when its slot
 * is granted, before its provider can start, and its child (pid, start time, group) is
 * journaled right after the spawn (`attempt_child`). A later plan run on the same
 * directory never starts a dispatched attempt again: a child still running is adopted or
 * torn down with proof (a teardown is a cancel of ours: the voice is minted anew); then
 * it binds the result file if the provider wrote one, else the voice fails with
 * EXECUTION_UNKNOWN. An attempt whose child never spawned is simply started. An attempt
 * this run cancelled itself after its provider started (the deadline, a signal, stdout
 * closed) is abandoned, not failed: its voice gets a fresh attempt at the next run's
 * first next.
 *
 * One driver per run: the run is claimed in the store (RUN_BUSY while another live plan
 * run holds it) before anything is dispatched, and released at the end.
 *
 * The steps: {@link openSession}, then per round `planNext`, {@link roundOf} (the open
 * attempts, or why the run stops) and {@link runRound}, which runs each attempt through
 * `dispatchAttempt` (attempt-dispatch.ts; a dispatched one through `resumeAttempt`,
 * attempt-resume.ts).
 */
export async function planRun(options: PlanRunOptions, planEnv: PlanEnv, supervise: SuperviseFn): Promise<PlanRunReport> {
  const session = openSession(options, planEnv, supervise);
  let stopped: RunStop | null = null;
  // One driver per run, claimed before anything is dispatched or changed; a run that does
  // not exist yet is claimed right after the next that creates it, before its first dispatch.
  let release: ReleaseRun | undefined;
  try {
    release = await claimRun(options.out, planEnv);
    let seen = '';
    while (!session.stop.aborted) {
      const next = await planNext({ out: options.out, ...startOptions(options, readBinding(session.runDir) === undefined) }, planEnv);
      release ??= await claimRun(options.out, planEnv);
      session.emit({ type: 'report', command: 'next', report: next });
      if (next.status !== 'awaiting_result') break;
      const round = roundOf(locateRun(options.out, planEnv).record, seen);
      if ('stop' in round) {
        stopped = round.stop;
        session.emit({ type: 'stopped', stop: stopped });
        break;
      }
      seen = round.key;
      await runRound(session, round.open);
    }
    const interrupted = session.interrupted();
    if (interrupted !== null) session.emit({ type: 'interrupted', reason: interrupted });
  } finally {
    session.close();
    await release?.();
  }
  const final = planStatus({ out: options.out }, planEnv);
  const interrupted = session.interrupted();
  if (interrupted !== null) final.status = 'interrupted';
  return Object.assign(final, { ends: session.ends, interrupted, stopped });
}

/** What the first next on a run starts it with (the plan, the spend cap); nothing on a later one. */
export function startOptions(options: Pick<PlanRunOptions, 'plan' | 'spendCap'>, first: boolean): { plan?: string; spendCap?: number } {
  if (!first) return {};
  return { ...(options.plan === undefined ? {} : { plan: options.plan }), ...(options.spendCap === undefined ? {} : { spendCap: options.spendCap }) };
}

/**
 * Runs a round's attempts at once. One voice refused or broken stops its sibling too, and
 * waits for its teardown: no child outlives the run that started it; then the first break
 * is the run's.
 */
async function runRound(session: RunSession, open: readonly AttemptRecord[]): Promise<void> {
  const settled = await Promise.allSettled(
    open.map((attempt) =>
      dispatchAttempt(session, attempt).catch((error: unknown) => {
        session.abort();
        throw error;
      }),
    ),
  );
  const broken = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (broken !== undefined) throw broken.reason;
}
