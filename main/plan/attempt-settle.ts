import { isLanewardError } from '../../formats/codes/error.ts';
import type { AttemptRecord } from '../../formats/review/run-record.ts';
import type { PlanReport } from './report.ts';
import type { RunSession } from './run-session.ts';
import type { AttemptEnd } from './run-types.ts';
import { planSubmit } from './submit.ts';
import { failVoice, outcomeCommand, type OutcomeFacts } from './voice-outcome.ts';

/** The model and spend a call's stream reported (null: take the configured model, charge its reservation). */
export interface Used {
  readonly model: string | null;
  readonly usageUsd: number | null;
}

const NOTHING_USED: Used = { model: null, usageUsd: null };

/**
 * A supervision's outcome is journaled with the voice's end, in one transaction; its
 * progress line is printed once that committed.
 */
export function journaled(attempt: Pick<AttemptRecord, 'id'>, outcome: OutcomeFacts | null) {
  return outcome === null ? [] : [outcomeCommand(attempt.id, outcome)];
}

/** Tells a supervision's outcome, once it is journaled. */
export function announce(session: RunSession, attempt: AttemptRecord, outcome: OutcomeFacts | null): void {
  if (outcome !== null) session.emit({ type: 'outcome', attempt: attempt.id, phase: attempt.phase, voice: attempt.voice, outcome });
}

/** Records how this run ended the attempt. */
export function ended(session: RunSession, attempt: AttemptRecord, state: AttemptEnd['state'], code: string | null, outcome: OutcomeFacts | null): void {
  session.ends.push({ attempt: attempt.id, phase: attempt.phase, voice: attempt.voice, state, code, outcome });
}

/** Closes the attempt's voice as a typed failure, its outcome journaled with it. */
export async function failAttempt(session: RunSession, attempt: AttemptRecord, status: 'failed' | 'unavailable', code: string, detail: string, outcome: OutcomeFacts | null): Promise<void> {
  // A call that failed after its stream gave its cost is charged that cost, not its reservation.
  const usd = outcome?.cost_usd ?? null;
  const report = await failVoice(session.options.out, session.planEnv, attempt.id, { status, code, detail, ...(usd === null ? {} : { usageUsd: usd }) }, journaled(attempt, outcome));
  announce(session, attempt, outcome);
  session.emit({ type: 'report', command: 'fail', report });
  ended(session, attempt, status, code, outcome);
}

/**
 * Binds the attempt's result file. A result the contract refuses is this voice's typed
 * failure (the outcome is journaled with it); anything else is the run's.
 */
export async function submitAttempt(session: RunSession, attempt: AttemptRecord, result: string, outcome: OutcomeFacts | null, used: Used = NOTHING_USED): Promise<void> {
  const { options, planEnv } = session;
  let report: PlanReport;
  try {
    const model = used.model ?? (attempt.voice === 'native' ? options.nativeModel : options.outsideModel);
    report = await planSubmit(
      { out: options.out, phase: attempt.phase, voice: attempt.voice, attempt: attempt.id, result, model, runner: 'plan-run', ...(used.usageUsd === null ? {} : { usageUsd: used.usageUsd }) },
      planEnv,
      journaled(attempt, outcome),
    );
  } catch (error) {
    if (!isLanewardError(error) || error.code === 'STATE_UNAVAILABLE' || error.code === 'INTERNAL') throw error;
    return failAttempt(session, attempt, 'failed', error.code, error.message, outcome);
  }
  announce(session, attempt, outcome);
  session.emit({ type: 'report', command: 'submit', report });
  ended(session, attempt, 'bound', null, outcome);
}
