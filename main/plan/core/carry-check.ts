import { LanewardError } from '../../../formats/codes/error.ts';
import { familiesConflict, type FamilyAnswer } from '../../../formats/review/model-family.ts';
import type { ReviewFinding } from '../../../formats/review/finding.ts';
import type { RunRecord } from '../../../formats/review/run-record.ts';
import { applyCarry, refuseCarry } from './carry.ts';
import { recordAndSettle } from './gate.ts';
import { reservation, usd, worstCase } from './spend.ts';
import type { TransitionContext } from './transition-context.ts';

export const CHECK_PHASE = 'carry-check';
export const DEFAULT_CHECK_CAP_USD = 5;

/**
 * Mints the carry check of the gate's unreviewed delta: one attempt for a reviewer of a
 * family other than the plan reviewers', its reservation held under the run's cap and
 * under --carry-check-cap. Refused over either, which leaves the gate to the owner.
 */
export function startCheck(review: RunRecord, context: TransitionContext): void {
  const gate = review.gate!;
  const each = reservation(review.spend);
  const cap = review.carry_check_cap ?? DEFAULT_CHECK_CAP_USD;
  if (each > cap) return refuseCarry(gate.rev, `the carry check would reserve ${usd(each)}, over --carry-check-cap ${usd(cap)}`, context);
  if (review.spend.cap !== null && worstCase(review.spend) + each > review.spend.cap + 1e-9) {
    return refuseCarry(gate.rev, `the carry check would take the worst case past the spend cap ${usd(review.spend.cap)}`, context);
  }
  review.spend.reserved += each;
  const n = review.next_attempt++;
  const attempt = `${review.run}-a${n}`;
  gate.check = { attempt, state: 'open', prompt: `carry-check.r${gate.rev}-prompt.md`, result: `carry-check.r${gate.rev}.a${n}.md`, reserve_usd: each };
  context.events.push({ type: 'carry_check_started', at: context.now, attempt, gate_rev: gate.rev, reserve_usd: each });
  context.report.carry.push({ fact: 'carry_check_started', attempt, prompt: gate.check.prompt, result: gate.check.result, families: planFamilies(review) });
}

/** The families of every model that reviewed the plan. */
export function planFamilies(review: RunRecord): string[] {
  return [...new Set(Object.values(review.attempts).flatMap((a) => (a.bound?.family == null ? [] : [a.bound.family])))];
}

/** A carry check's end: a read result (parsed from bytes whose sha256 is `digest`), or unavailable. */
export type CheckVerdictInput =
  | { readonly kind: 'result'; readonly attempt: string; readonly snapshot: string; readonly model: string; readonly family: FamilyAnswer | null; readonly findings: readonly ReviewFinding[]; readonly digest: string; readonly sameFamily?: string }
  | { readonly kind: 'unavailable'; readonly attempt: string; readonly snapshot: string; readonly why: string };

/**
 * Binds the carry check's verdict. No High or Critical finding carries the gate; a severe
 * finding or an unavailable reviewer leaves it to the owner. The verdict stays on the gate.
 */
export function bindCheck(review: RunRecord, input: CheckVerdictInput, context: TransitionContext): void {
  const gate = review.gate;
  const check = gate?.check;
  if (gate === null || check === undefined || check.state !== 'open' || review.state !== 'gate_pending') {
    throw new LanewardError('PHASE_NOT_AWAITING', 'no carry check is open (it is void once the gate is answered, revised or replaced)');
  }
  if (check.attempt !== input.attempt) throw new LanewardError('ATTEMPT_MISMATCH', `the open carry check is ${check.attempt}, not ${input.attempt}`);
  if (review.snapshot !== input.snapshot) throw new LanewardError('PHASE_NOT_AWAITING', 'the plan changed after the check was dispatched; the check is void');
  if (input.kind === 'result' && input.family !== null && input.sameFamily === undefined) {
    for (const planFamily of planFamilies(review)) {
      if (familiesConflict(input.family, { family: planFamily, prefix: null, source: null })) {
        throw new LanewardError('MODEL_FAMILY_CONFLICT', `${input.model} is ${planFamily}, a plan reviewer's family; pass --same-family "<why>" when no other family is available`);
      }
    }
  }
  review.spend.reserved = Math.max(0, review.spend.reserved - check.reserve_usd);
  review.spend.unknown_n += 1;
  review.spend.unknown_usd += check.reserve_usd;
  check.reserve_usd = 0;
  check.at = context.now;
  if (input.kind === 'unavailable') {
    check.state = 'unavailable';
    check.why = input.why;
    refuseCarry(gate.rev, `the carry check was unavailable: ${input.why}`, context);
  } else {
    const severe = input.findings.filter((f) => f.severity === 'Critical' || f.severity === 'High').length;
    check.model = input.model;
    check.findings = input.findings.length;
    check.severe = severe;
    if (input.sameFamily !== undefined) check.why = `same family: ${input.sameFamily}`;
    check.state = severe > 0 ? 'fail' : 'pass';
    context.report.carry.push({ fact: 'carry_check_verdict', attempt: check.attempt, verdict: check.state, findings: check.findings, severe, sha256: input.digest });
    if (severe > 0) refuseCarry(gate.rev, `the carry check found ${severe} High or Critical finding(s)`, context);
    else {
      applyCarry(review, context);
      recordAndSettle(review, context);
    }
  }
  context.events.push({ type: 'carry_check_done', at: context.now, attempt: check.attempt, verdict: check.state });
}
