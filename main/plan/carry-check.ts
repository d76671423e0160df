import { join, resolve } from 'node:path';
import { appendTrail } from '../trail/trail-file.ts';
import { LanewardError, toError } from '../../formats/error.ts';
import { familiesConflict } from '../../formats/model-family.ts';
import { sha256 } from '../../formats/plan-doc.ts';
import { parseReviewResult, renderResultFormat } from '../../formats/review-result.ts';
import type { JournalEvent, RunRecord } from '../../formats/review-run.ts';
import { tryReadBounded } from '../fs/read-bounded.ts';
import { transact } from '../store/store.ts';
import { recordChoice, settleGate } from './answer.ts';
import { applyCarry, refuseCarry } from './carry.ts';
import { checkpointAfter } from './checkpoint.ts';
import { describeRun } from './describe.ts';
import { familyOf } from './families.ts';
import { locateRun, type PlanEnv } from './locate.ts';
import type { PlanReport } from './report.ts';
import { emptyReport, terminalStatus } from './report.ts';
import { syncRunFiles } from './run-files.ts';
import { reservation, worstCase, usd } from './spend.ts';
import { MAX_RESULT_BYTES } from './submit.ts';

export const CHECK_PHASE = 'carry-check';
export const DEFAULT_CHECK_CAP_USD = 5;

/**
 * Mints the carry check of the gate's unreviewed delta: one attempt for a reviewer of a
 * family other than the plan reviewers', its reservation held under the run's cap and
 * under --carry-check-cap. Refused over either, which leaves the gate to the owner.
 */
export function startCheck(run: RunRecord, now: string, events: JournalEvent[], report: PlanReport): void {
  const gate = run.gate!;
  const each = reservation(run.spend);
  const cap = run.carry_check_cap ?? DEFAULT_CHECK_CAP_USD;
  if (each > cap) return refuseCarry(gate.rev, `the carry check would reserve ${usd(each)}, over --carry-check-cap ${usd(cap)}`, now, events, report);
  if (run.spend.cap !== null && worstCase(run.spend) + each > run.spend.cap + 1e-9) {
    return refuseCarry(gate.rev, `the carry check would take the worst case past the spend cap ${usd(run.spend.cap)}`, now, events, report);
  }
  run.spend.reserved += each;
  const n = run.next_attempt++;
  const attempt = `${run.run}-a${n}`;
  gate.check = { attempt, state: 'open', prompt: `carry-check.r${gate.rev}-prompt.md`, result: `carry-check.r${gate.rev}.a${n}.md`, reserve_usd: each };
  events.push({ type: 'carry_check_started', at: now, attempt, gate_rev: gate.rev, reserve_usd: each });
  report.carry.push(`CARRY_CHECK: ${attempt} prompt=${gate.check.prompt} result=${gate.check.result} model_family=differs from ${planFamilies(run).join(',') || 'the plan reviewers'}`);
}

/** The families of every model that reviewed the plan. */
function planFamilies(run: RunRecord): string[] {
  return [...new Set(Object.values(run.attempts).flatMap((a) => (a.bound?.family == null ? [] : [a.bound.family])))];
}

/** The prompt of a carry check: the delta against the plan at the last gate, the accepted changes, the whole plan. */
export function renderCheckPrompt(run: RunRecord, resultPath: string): string {
  const gate = run.gate!;
  const prev = run.past_gates[run.past_gates.length - 1];
  const before = (prev?.implementation ?? '').split('\n');
  const after = run.implementation.split('\n');
  const removed = before.filter((line) => !after.includes(line)).map((line) => `- ${line}`);
  const added = after.filter((line) => !before.includes(line)).map((line) => `+ ${line}`);
  const accepted = (prev?.items ?? []).filter((i) => prev!.answers[i.id] !== undefined && i.keep !== undefined && prev!.answers[i.id]!.chosen !== i.keep && i.id !== 'p1');
  return [
    `# Carry check: run ${run.run}, gate_rev ${gate.rev}`,
    '',
    'The plan changed after its review rounds were capped. Read the change below and report anything it breaks. Any High or Critical finding sends the gate back to the owner.',
    '',
    `## The change against plan-at-gate.r${prev?.rev ?? gate.rev - 1}.md`,
    '',
    '```diff', ...removed, ...added, '```',
    '',
    '## Changes the owner accepted',
    '',
    ...(accepted.length === 0 ? ['None.'] : accepted.map((i) => `- ${i.title}`)),
    '',
    '## The whole plan',
    '',
    run.implementation.trimEnd(),
    '',
    renderResultFormat(CHECK_PHASE, run.snapshot, resultPath).trimEnd(),
    '',
  ].join('\n');
}

export interface CheckOptions {
  readonly out: string | undefined;
  readonly attempt?: string;
  readonly result?: string;
  readonly model?: string;
  readonly sameFamily?: string;
  readonly unavailable?: string;
}

/**
 * `plan check`: binds the carry check's result. No High or Critical finding carries the
 * gate; a severe finding or an unavailable reviewer leaves it to the owner. The verdict
 * is kept on gate.json and on the decision rows.
 */
export async function planCheck(options: CheckOptions, penv: PlanEnv): Promise<PlanReport> {
  if (options.attempt === undefined) throw new LanewardError('USAGE', '--attempt <id> is required (the id on the CARRY_CHECK line)');
  if ((options.result === undefined) === (options.unavailable === undefined)) throw new LanewardError('USAGE', 'pass --result <file> --model <id>, or --unavailable "<why>"');
  const located = locateRun(options.out, penv);
  const { store, runDir } = located;
  const report = emptyReport(runDir, located.record.run);
  const now = new Date().toISOString();
  let parsed: ReturnType<typeof parseReviewResult> | undefined;
  let digest = '';
  if (options.result !== undefined) {
    if (options.model === undefined) throw new LanewardError('USAGE', '--model <id> is required');
    const path = resolve(penv.cwd, options.result);
    const read = tryReadBounded(path, MAX_RESULT_BYTES);
    if (!read.ok) throw new LanewardError('RESULT_UNREADABLE', read.detail, { path });
    digest = sha256(read.bytes);
    parsed = parseReviewResult(read.bytes, { phase: CHECK_PHASE, snapshot: located.record.snapshot, record: false, attested: false });
    if (!parsed.ok) throw new LanewardError(parsed.code, parsed.message, { path: parsed.line === null ? path : `${path}:${parsed.line}` });
  }
  const family = options.model === undefined ? null : familyOf(options.model, penv.env);
  const run = await transact(store, located.record.run, (current) => {
    if (current === undefined) throw new LanewardError('RUN_NOT_INITIALIZED', `run ${located.record.run} vanished`);
    const gate = current.gate;
    const check = gate?.check;
    if (gate === null || check === undefined || check.state !== 'open' || current.state !== 'gate_pending') {
      throw new LanewardError('PHASE_NOT_AWAITING', 'no carry check is open (it is void once the gate is answered, revised or replaced)');
    }
    if (check.attempt !== options.attempt) throw new LanewardError('ATTEMPT_MISMATCH', `the open carry check is ${check.attempt}, not ${options.attempt}`);
    if (current.snapshot !== located.record.snapshot) throw new LanewardError('PHASE_NOT_AWAITING', 'the plan changed after the check was dispatched; the check is void');
    if (family !== null && options.sameFamily === undefined) {
      for (const planFamily of planFamilies(current)) {
        if (familiesConflict(family, { family: planFamily, prefix: null, source: null })) {
          throw new LanewardError('MODEL_FAMILY_CONFLICT', `${options.model} is ${planFamily}, a plan reviewer's family; pass --same-family "<why>" when no other family is available`);
        }
      }
    }
    const events: JournalEvent[] = [];
    current.spend.reserved = Math.max(0, current.spend.reserved - check.reserve_usd);
    current.spend.unknown_n += 1;
    current.spend.unknown_usd += check.reserve_usd;
    check.reserve_usd = 0;
    check.at = now;
    if (options.unavailable !== undefined) {
      check.state = 'unavailable';
      check.why = options.unavailable;
      refuseCarry(gate.rev, `the carry check was unavailable: ${options.unavailable}`, now, events, report);
    } else {
      const severe = parsed!.ok ? parsed!.findings.filter((f) => f.severity === 'Critical' || f.severity === 'High').length : 0;
      check.model = options.model!;
      check.findings = parsed!.ok ? parsed!.findings.length : 0;
      check.severe = severe;
      if (options.sameFamily !== undefined) check.why = `same family: ${options.sameFamily}`;
      check.state = severe > 0 ? 'fail' : 'pass';
      report.carry.push(`CARRY_CHECK: ${check.attempt} verdict=${check.state} findings=${check.findings} severe=${severe} sha256=${digest.slice(0, 12)}`);
      if (severe > 0) refuseCarry(gate.rev, `the carry check found ${severe} High or Critical finding(s)`, now, events, report);
      else {
        applyCarry(current, now, events, report);
        for (const item of gate.items) recordChoice(current, item, gate.answers[item.id]!.chosen, report);
        settleGate(current, gate.answers['p1']!.chosen, now, events);
      }
    }
    events.push({ type: 'carry_check_done', at: now, attempt: check.attempt, verdict: check.state });
    current.updated_at = now;
    return { change: { record: current, events }, result: current };
  });
  syncRunFiles(store, run, runDir);
  recordInTrail(run, runDir, options.result ?? '-', now, report);
  checkpointAfter(store, run, runDir, penv.env, report.after);
  describeRun(run, runDir, report, { open: false });
  report.status = terminalStatus(run.state);
  return report;
}

/** The verdict also goes to the run's decision trail, the plain record a person reads. */
function recordInTrail(run: RunRecord, runDir: string, evidence: string, at: string, report: PlanReport): void {
  const check = run.gate?.check;
  if (check === undefined) return;
  try {
    appendTrail(join(runDir, 'decisions.tsv'), {
      phase: CHECK_PHASE,
      decision: `gate_rev ${run.gate!.rev} carry ${check.state === 'pass' ? 'checked' : 'left to the owner'}`,
      why: check.why ?? `${check.severe ?? 0} High or Critical of ${check.findings ?? 0} finding(s)`,
      evidence,
      result: check.state,
    }, undefined, at);
  } catch (error) {
    report.after.push(`TRAIL: failed ${toError(error).message.replace(/\s+/g, ' ')}`);
  }
}
