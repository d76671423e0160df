import type { AttemptRecord } from '../../formats/review/run-record.ts';
import { holderAlive, processStart } from '../process/process-alive.ts';
import { commit, runCommand } from './commit.ts';
import type { Command } from './core/machine.ts';
import type { OutcomeFacts } from './core/voices.ts';
import { locateRun } from './locate.ts';
import { emptyReport, type PlanReport } from './report.ts';
import type { PlanEnv } from './settings.ts';

export type { OutcomeFacts };
export { inFlight } from './core/voices.ts';

/**
 * Records that `plan run` handed an open attempt to a supervisor: from here its provider
 * may have started, so a later `plan run` never starts it again (see planRun).
 */
export async function markDispatched(out: string, planEnv: PlanEnv, attemptId: string): Promise<void> {
  const { store, record, runDir } = locateRun(out, planEnv);
  const by = { pid: process.pid, ticks: processStart(process.pid)?.ticks ?? '' };
  await commit(store, record.run, { type: 'dispatch', input: { attempt: attemptId, by } }, emptyReport(runDir, record.run));
}

/** Whether the process that dispatched an attempt still runs (a crashed driver's attempts are resumed instead). */
export function dispatcherAlive(attempt: AttemptRecord): boolean {
  return attempt.dispatched_by !== undefined && holderAlive(attempt.dispatched_by);
}

/** Journals one supervision's outcome for an attempt, whatever it was (see core/voices.ts). */
export async function recordOutcome(out: string, planEnv: PlanEnv, attemptId: string, facts: OutcomeFacts): Promise<void> {
  const { store, record, runDir } = locateRun(out, planEnv);
  await commit(store, record.run, outcomeCommand(attemptId, facts), emptyReport(runDir, record.run));
}

/** The outcome as a command, to journal with the voice's end in one transaction. */
export function outcomeCommand(attemptId: string, facts: OutcomeFacts): Command {
  return { type: 'outcome', input: { attempt: attemptId, facts } };
}

/** Closes one voice of an open attempt as a typed failure (see core/voices.ts). */
export async function failVoice(
  out: string,
  planEnv: PlanEnv,
  attemptId: string,
  failure: { readonly status: 'failed' | 'unavailable'; readonly code: string; readonly detail: string; readonly usageUsd?: number },
  journal: readonly Command[] = [],
): Promise<PlanReport> {
  const located = locateRun(out, planEnv);
  return (await runCommand(located, planEnv, [...journal, { type: 'fail', input: { attempt: attemptId, ...failure } }], { open: false })).report;
}

/** Gives up an open attempt that this very `plan run` cancelled after its provider started (see core/voices.ts). */
export async function cancelVoice(out: string, planEnv: PlanEnv, attemptId: string, why: string, journal: readonly Command[] = [], usageUsd: number | null = null): Promise<PlanReport> {
  const located = locateRun(out, planEnv);
  return (await runCommand(located, planEnv, [...journal, { type: 'cancel', input: { attempt: attemptId, why, ...(usageUsd === null ? {} : { usageUsd }) } }], { open: false })).report;
}
