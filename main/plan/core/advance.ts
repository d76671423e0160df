import { LanewardError } from '../../../formats/codes/error.ts';
import type { PhaseTiming, RunRecord } from '../../../formats/review/run-record.ts';
import { tryCarry } from './carry.ts';
import { startCheck } from './carry-check.ts';
import { numberedFindings } from './findings.ts';
import { recordAndSettle, writeGate } from './gate.ts';
import { mintAttempt, openPhase } from './phases.ts';
import { attemptOf, isCurrent, nextPhase, phaseOf } from './records.ts';
import { admit, settle } from './spend.ts';
import type { Step } from './step.ts';
import { cycleFact, phaseTimings } from './timing.ts';

export interface AdvanceInput {
  /** An open (or failed native) attempt to replace with a fresh one. */
  readonly redispatch?: string;
  /** The first next's --ceo-only, given again: refused on a full run. */
  readonly ceoOnly?: boolean;
  /** The plan file's sha256 on disk now (a carry is refused once it changed). */
  readonly planFileSha: string | null;
}

/**
 * Moves a run one step: mints attempts for voices a release left empty and reports the
 * attempts an earlier command left open; opens the next phase once one closed; after the
 * last, ends a CEO-only run or writes the gate (and carries it or starts its check).
 * Returns the phase timings to keep in the history when the last phase closed.
 */
export function advance(run: RunRecord, input: AdvanceInput, step: Step): { key: [string, string]; value: PhaseTiming }[] {
  if (input.ceoOnly === true && !run.ceo_only) {
    throw new LanewardError('CEO_ONLY_AFTER_INIT', `run ${run.run} is a full run; --ceo-only goes on a run's first next`);
  }
  run.commands += 1;
  if (run.amendments.length > 0 && run.state !== 'incomplete') {
    throw new LanewardError('PLAN_AMEND_PENDING', `${run.amendments.length} accepted plan change(s) wait to be incorporated: ${run.amendments.map((a) => a.decision).join(', ')}`);
  }
  if (input.redispatch !== undefined) redispatch(run, input.redispatch, step);
  if (run.state === 'awaiting_result' && run.current !== null) {
    const phase = phaseOf(run, run.current);
    for (const voice of ['native', 'outside'] as const) {
      // A released attempt leaves its voice without one: the parent asked for a fresh one.
      if (phase[voice].attempt === null && phase[voice].status === 'pending') mintAttempt(run, phase, voice, admit(run.spend, 1), step);
    }
    for (const attempt of Object.values(run.attempts)) {
      if (attempt.state === 'open' && attempt.minted_by < run.commands) {
        step.report.unknown.push({ attempt: attempt.id, phase: attempt.phase, voice: attempt.voice });
      }
    }
    return [];
  }
  if (run.state !== 'phase_closed') return [];
  const following = nextPhase(run);
  if (following !== null) {
    openPhase(run, following, step);
    return [];
  }
  if (run.ceo_only) {
    run.state = 'reviewed';
    run.current = null;
    step.events.push({ type: 'reviewed', at: step.now });
    const c = run.phases.ceo!.consensus!;
    step.report.after.push({ fact: 'reviewed', run: run.run, phase: 'ceo', confirmed: c.confirmed, new: c.new, native_only: c.native_only });
  } else {
    writeGate(run, step);
    const urgentOpen = numberedFindings(run, step).filter((f) => f.urgent === true && isCurrent(run, f.attempt)).map((f) => f.id);
    const carry = tryCarry(run, { urgentOpen, planFileSha: input.planFileSha }, step);
    if (carry === 'check') startCheck(run, step);
    if (carry === 'carried') recordAndSettle(run, step);
  }
  step.report.after.push(cycleFact(run));
  return phaseTimings(run);
}

function redispatch(run: RunRecord, id: string, step: Step): void {
  const old = attemptOf(run, id);
  if (old === undefined) throw new LanewardError('ATTEMPT_MISMATCH', `no attempt ${id} in run ${run.run}`);
  // A native voice that failed (plan run records it; nothing retries it by itself) is
  // redispatched only here, by the parent's explicit choice: the phase cannot close without it.
  const failedNative = old.voice === 'native' && (old.state === 'failed' || old.state === 'unavailable');
  if ((old.state !== 'open' && !failedNative) || run.current !== old.phase || run.state !== 'awaiting_result' || phaseOf(run, old.phase)[old.voice].attempt !== id) {
    throw new LanewardError('PHASE_NOT_AWAITING', `attempt ${id} is ${old.state}; only an open attempt (or a failed native one) of the open phase can be redispatched`);
  }
  if (old.state === 'open') {
    // The call may have gone out: its reservation stays counted, as unknown spend.
    settle(run.spend, old, null);
    old.state = 'abandoned';
    step.events.push({ type: 'attempt_abandoned', at: step.now, attempt: id });
  }
  mintAttempt(run, phaseOf(run, old.phase), old.voice, admit(run.spend, 1), step);
}
