import { join, resolve } from 'node:path';
import { LanewardError, toError } from '../../formats/codes/error.ts';
import { sha256 } from '../../formats/text/sha256.ts';
import { parseReviewResult } from '../../formats/review/result.ts';
import type { RunRecord } from '../../formats/review/run-record.ts';
import { tryReadBounded } from '../fs/read-bounded.ts';
import { appendTrail } from '../trail/trail-file.ts';
import { runCommand } from './commit.ts';
import { CHECK_PHASE } from './core/carry-check.ts';
import { locateRun } from './locate.ts';
import type { PlanReport } from './report.ts';
import type { ReportFact } from './core/report-facts.ts';
import type { PlanEnv } from './settings.ts';
import { MAX_RESULT_BYTES } from './submit.ts';

export interface CheckOptions {
  readonly out: string | undefined;
  readonly attempt?: string;
  readonly result?: string;
  readonly model?: string;
  readonly sameFamily?: string;
  readonly unavailable?: string;
}

/**
 * `plan check`: binds the carry check's result (see core/carry-check.ts). The verdict is
 * kept on gate.json, on the decision rows and in the run's decision trail.
 */
export async function planCheck(options: CheckOptions, planEnv: PlanEnv): Promise<PlanReport> {
  if (options.attempt === undefined) throw new LanewardError('USAGE', '--attempt <id> is required (the id on the CARRY_CHECK line)');
  if ((options.result === undefined) === (options.unavailable === undefined)) throw new LanewardError('USAGE', 'pass --result <file> --model <id>, or --unavailable "<why>"');
  const located = locateRun(options.out, planEnv);
  const { attempt } = options;
  const snapshot = located.record.snapshot;
  let input;
  if (options.result !== undefined) {
    if (options.model === undefined) throw new LanewardError('USAGE', '--model <id> is required');
    const path = resolve(planEnv.cwd, options.result);
    const read = tryReadBounded(path, MAX_RESULT_BYTES);
    if (!read.ok) throw new LanewardError('RESULT_UNREADABLE', read.detail, { path });
    const parsed = parseReviewResult(read.bytes, { phase: CHECK_PHASE, snapshot, record: false, attested: false });
    if (!parsed.ok) throw new LanewardError(parsed.code, parsed.message, { path: parsed.line === null ? path : `${path}:${parsed.line}` });
    const family = planEnv.settings.familyOf(options.model);
    input = { kind: 'result' as const, attempt, snapshot, model: options.model, family, findings: parsed.findings, digest: sha256(read.bytes), ...(options.sameFamily === undefined ? {} : { sameFamily: options.sameFamily }) };
  } else {
    input = { kind: 'unavailable' as const, attempt, snapshot, why: options.unavailable! };
  }
  const alsoWrite = (record: RunRecord, report: PlanReport) => recordInTrail(record, located.runDir, options.result ?? '-', record.updated_at, report.after);
  return (await runCommand(located, planEnv, { type: 'check', input }, { open: false, alsoWrite })).report;
}

/** The verdict also goes to the run's decision trail, the plain record a person reads. */
function recordInTrail(review: RunRecord, runDir: string, evidence: string, at: string, lines: ReportFact[]): void {
  const check = review.gate?.check;
  if (check === undefined) return;
  try {
    appendTrail(join(runDir, 'decisions.tsv'), {
      phase: CHECK_PHASE,
      decision: `gate_rev ${review.gate!.rev} carry ${check.state === 'pass' ? 'checked' : 'left to the owner'}`,
      why: check.why ?? `${check.severe ?? 0} High or Critical of ${check.findings ?? 0} finding(s)`,
      evidence,
      result: check.state,
    }, undefined, at);
  } catch (error) {
    lines.push({ fact: 'trail_failed', detail: toError(error).message });
  }
}
