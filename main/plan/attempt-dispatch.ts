import { join } from 'node:path';
import type { AttemptRecord } from '../../formats/review/run-record.ts';
import { nowMs } from '../../workers/supervise/monotonic-timer.ts';
import type { Outcome } from '../../workers/supervise/outcome.ts';
import { childRecord } from '../dispatch/orphans.ts';
import { specFrom } from '../lease/lease-options.ts';
import { costOf } from '../providers/cost.ts';
import { launchOf, launchSpec, settleResult, type Launch } from '../providers/launch.ts';
import { recordChild } from './attempt-child.ts';
import { withAttemptOutput } from './attempt-output.ts';
import { resumeAttempt } from './attempt-resume.ts';
import { announce, ended, failAttempt, journaled, submitAttempt } from './attempt-settle.ts';
import { cancelDetail, failureDetail, outcomeFacts, outcomeVerdict } from './outcome-facts.ts';
import { runnerOf, type RunSession } from './run-session.ts';
import { cancelVoice, markDispatched, recordOutcome } from './voice-outcome.ts';

/**
 * Runs one open attempt to its end: an attempt an earlier driver dispatched is resumed,
 * never started twice ({@link resumeAttempt}); any other is supervised, then settled.
 */
export async function dispatchAttempt(session: RunSession, attempt: AttemptRecord): Promise<void> {
  const { options, planEnv, runDir } = session;
  const prompt = join(runDir, attempt.prompt);
  const result = join(runDir, attempt.result);
  if (attempt.dispatched_at !== undefined && (await resumeAttempt(session, attempt, result)) !== 'dispatch') return;
  const launch = launchOf(runnerOf(options, attempt), { role: 'reviewer', prompt, result });
  const launched = launchSpec({ ...specFrom(session.verified.spec, session.verified.sha256, session.request, launch.argv, nowMs()), cwd: planEnv.cwd }, launch, {
    LANEWARD_ATTEMPT: attempt.id,
    LANEWARD_PROMPT_FILE: prompt,
    LANEWARD_RESULT_FILE: result,
  });
  // Its output goes to files of the attempt: what it streams outlives this run if it dies.
  const spec = withAttemptOutput(launched, runDir, attempt.id);
  const outcome = await session.supervise(spec, {
    cancel: session.stop,
    // The provider's budget starts with its slot: waiting behind other children is not its time.
    budgetFromSlot: true,
    onSlot: async () => {
      await markDispatched(options.out, planEnv, attempt.id);
      session.emit({ type: 'dispatched', attempt: attempt.id, phase: attempt.phase, voice: attempt.voice });
    },
    // Journaled while it runs: a plan run started after this one died finds it.
    onSpawn: (child) => recordChild(options.out, planEnv, attempt.id, childRecord(spec, child)),
  });
  return settleAttempt(session, attempt, result, launch, outcome);
}

/** Journals a supervised attempt's end as its {@link outcomeVerdict} says. */
export async function settleAttempt(session: RunSession, attempt: AttemptRecord, result: string, launch: Pick<Launch, 'model' | 'provider'>, outcome: Outcome): Promise<void> {
  const { options, planEnv } = session;
  // The call's cost: the provider's own figure, else its tokens at the operator's prices.
  const usd = costOf(outcome.provider, launch.model, options.prices);
  const facts = outcomeFacts(outcome, usd);
  const verdict = outcomeVerdict(outcome);
  switch (verdict.verdict) {
    case 'bind':
      if (launch.provider !== undefined) settleResult(result, outcome.provider);
      return submitAttempt(session, attempt, result, facts, { model: launch.model, usageUsd: usd });
    case 'open':
      // Nothing went out: the attempt stays open for the next plan run.
      await recordOutcome(options.out, planEnv, attempt.id, facts);
      announce(session, attempt, facts);
      ended(session, attempt, 'open', 'CANCELLED', facts);
      return;
    case 'cancelled': {
      // The attempt is given up and its voice waits for a fresh one, which the next plan
      // run's first next mints; its phase never closes without it.
      const report = await cancelVoice(options.out, planEnv, attempt.id, cancelDetail(outcome, facts.duration_ms), journaled(attempt, facts), usd);
      announce(session, attempt, facts);
      session.emit({ type: 'report', command: 'fail', report });
      ended(session, attempt, 'cancelled', 'CANCELLED', facts);
      return;
    }
    case 'fail':
      return failAttempt(session, attempt, verdict.status, verdict.code, failureDetail(options.action, outcome, facts.duration_ms), facts);
  }
}
