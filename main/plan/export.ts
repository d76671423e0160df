import { join } from 'node:path';
import { isLanewardError, LanewardError, toError } from '../../formats/error.ts';
import { sha256 } from '../../formats/plan-doc.ts';
import type { RunRecord } from '../../formats/review-run.ts';
import type { RunManifest } from '../../formats/schemas/run.ts';
import { validateRun } from '../../workers/validate/validate-run.ts';
import { transact, type Store } from '../store/store.ts';
import { checkpointAfter } from './checkpoint.ts';
import { describeRun } from './describe.ts';
import { gateDocument } from './gate-document.ts';
import { locateRun, type PlanEnv } from './locate.ts';
import { allFindings } from './machine.ts';
import { decisionRows, findingRows, keptRows, taskRows, timingDocument } from './export-rows.ts';
import { draftGate } from '../../formats/review-gate.ts';
import { renderCeoReview, renderPlanMd, renderReviewRecord } from './export-docs.ts';
import { emptyReport, terminalStatus, type PlanReport } from './report.ts';
import { ensureFile, sealName, syncRunFiles } from './run-files.ts';
import { syncDirectory, syncFile } from '../fs/atomic-write.ts';

export interface ExportOptions {
  readonly out: string | undefined;
}

const EXPORTABLE = new Set(['gate_pending', 'complete', 'incomplete', 'reviewed']);

/**
 * `plan export`: renders every artifact from the store into the run directory, each
 * through temp file + rename, run.json last with every hash, then validates the result
 * in-process. An export that does not validate is a failure (EXPORT_INVALID), never
 * printed as success. Journaled as started and done, so `resume` finishes a killed one.
 */
export async function planExport(options: ExportOptions, penv: PlanEnv): Promise<PlanReport> {
  const located = locateRun(options.out, penv);
  const { store, runDir } = located;
  const report = emptyReport(runDir, located.record.run);
  const run = await markExport(store, located.record.run, 'started');
  writeExport(store, run, runDir, report);
  const done = await markExport(store, run.run, 'done');
  checkpointAfter(store, done, runDir, penv.env, report.after);
  describeRun(done, runDir, report, { open: false });
  report.status = terminalStatus(done.state);
  return report;
}

export async function markExport(store: Store, runId: string, state: 'started' | 'done'): Promise<RunRecord> {
  const now = new Date().toISOString();
  return transact(store, runId, (current) => {
    if (current === undefined) throw new LanewardError('RUN_NOT_INITIALIZED', `run ${runId} vanished from ${store.root}`);
    const run = current;
    const refusal = exportRefusal(run);
    if (refusal !== null) throw refusal;
    run.export = { state, at: now };
    return { change: { record: run, events: [{ type: `export_${state}`, at: now }] }, result: run };
  });
}

/** Why the run cannot be exported as it stands (not at a gate or an end, or changes pending); null when it can. */
export function exportRefusal(run: RunRecord): LanewardError | null {
  if (!EXPORTABLE.has(run.state)) return new LanewardError('EXPORT_NOT_READY', `the run is ${run.state === 'phase_closed' ? 'between phases' : run.state}`);
  if (run.state === 'complete' && run.amendments.length > 0) {
    return new LanewardError('PLAN_AMEND_PENDING', `${run.amendments.length} accepted plan change(s) are not incorporated: ${run.amendments.map((a) => a.decision).join(', ')}`);
  }
  return null;
}

/**
 * One filesystem step of an export: whatever fails (a directory where a file goes, no
 * space, no permission) is IO_ERROR naming the path. The run state is kept and the export
 * stays started, so a later export or resume writes it again.
 */
function onDisk<T>(path: string, step: () => T): T {
  try {
    return step();
  } catch (error) {
    if (isLanewardError(error)) throw error;
    throw new LanewardError('IO_ERROR', `${path}: ${toError(error).message}; the run state is kept: fix the path, then run plan export or plan resume again`, { path, cause: error });
  }
}

/** Writes the artifacts and validates them; throws EXPORT_INVALID when they do not validate. */
export function writeExport(store: Store, run: RunRecord, runDir: string, report: PlanReport): void {
  syncRunFiles(store, run, runDir, 'full');
  const findings = allFindings(run, { findingsOf: (id) => store.blobs.get([run.run, id])?.findings ?? [] });
  const kept = run.ceo_only ? keptRows(run, ceoItems(run, findings)) : [];
  const decisions = run.ceo_only ? kept : decisionRows(run);
  const tasks = taskRows(run, decisions, findings);
  const files: [string, string][] = [
    ...(run.ceo_only ? [['ceo-review.md', renderCeoReview(run, findings, kept)] as [string, string]] : []),
    ['plan.md', renderPlanMd(run, findings)],
    ['review-record.md', renderReviewRecord(run)],
    ['decisions.jsonl', jsonl(decisions)],
    ['findings.jsonl', jsonl(findingRows(run, findings))],
    ['tasks.jsonl', jsonl(tasks)],
    ['timing.json', `${JSON.stringify(timingDocument(run), null, 2)}\n`],
  ];
  if (run.gate !== null) files.push(['gate.json', `${JSON.stringify(gateDocument(run), null, 2)}\n`]);
  const artifacts: RunManifest['artifacts'] = {};
  for (const [name, content] of files) {
    // Not synced one by one: every artifact, then the directory, is synced before run.json.
    onDisk(join(runDir, name), () => ensureFile(join(runDir, name), content, undefined, false));
    artifacts[name] = { path: name, sha256: sha256(content) };
  }
  const phases: RunManifest['phases'] = {};
  for (const id of run.order) {
    const phase = run.phases[id]!;
    const entry: Record<string, unknown> = {};
    if (phase.snapshot !== null) entry['snapshot'] = phase.snapshot;
    for (const voice of ['native', 'outside'] as const) {
      const attempt = phase[voice].attempt === null ? undefined : run.attempts[phase[voice].attempt!];
      const outcome: Record<string, unknown> = { status: phase[voice].status };
      if (attempt?.state === 'bound' && attempt.bound !== undefined) {
        const blob = store.blobs.get([run.run, attempt.id]);
        const key = `${id}-${voice}.md`;
        outcome['model'] = attempt.bound.model;
        outcome['provider'] = attempt.bound.runner;
        outcome['output'] = key;
        outcome['receipt'] = attempt.bound.receipt;
        artifacts[key] = { path: sealName(attempt), sha256: blob === undefined ? attempt.bound.sha256 : sha256(blob.bytes) };
      } else if (attempt?.why !== undefined) {
        outcome['why'] = attempt.why;
      }
      entry[voice] = outcome;
    }
    phases[id] = entry as RunManifest['phases'][string];
  }
  const manifest: RunManifest = {
    schema_version: 1,
    run: run.run,
    status: terminalStatus(run.state) as RunManifest['status'],
    required_phases: run.order,
    phases,
    artifacts,
    session_kind: run.session_kind,
    counts: {
      decisions: decisions.length,
      decisions_pending: decisions.filter((d) => d.status === 'pending').length,
      findings: findings.length,
      tasks: tasks.length,
    },
    gate_rev: run.gate_rev,
    deviations: run.deviations,
  };
  // Files other commands wrote without fsync become durable before run.json names them,
  // and run.json (written durably, last) before export is recorded done.
  for (const entry of Object.values(artifacts).map((a) => a.path)) onDisk(join(runDir, entry), () => syncFile(join(runDir, entry)));
  onDisk(runDir, () => syncDirectory(runDir));
  onDisk(join(runDir, 'run.json'), () => ensureFile(join(runDir, 'run.json'), `${JSON.stringify(manifest, null, 2)}\n`));
  onDisk(join(runDir, 'run.json'), () => syncFile(join(runDir, 'run.json')));
  const verdict = validateRun(join(runDir, 'run.json'));
  if (!verdict.valid) {
    const first = verdict.errors[0];
    throw new LanewardError('EXPORT_INVALID', `${verdict.errors.length} validation error(s); first: ${first?.code} ${first?.message} at ${first?.path}`, { path: join(runDir, 'run.json') });
  }
  report.after.push(`EXPORTED: run=${run.run} files=${Object.keys(artifacts).length + 1} run_json=${join(runDir, 'run.json')}`);
  report.after.push(`ARTIFACT_VALID: run=${run.run} status=${verdict.status}${attested(run) > 0 ? ` attested=${attested(run)}` : ''}`);
}

function attested(run: RunRecord): number {
  return Object.values(run.attempts).filter((a) => a.state === 'bound' && a.bound?.receipt === 'attested').length;
}

function jsonl(rows: readonly unknown[]): string {
  return rows.map((row) => `${JSON.stringify(row)}\n`).join('');
}

/** The items a gate would have asked of a CEO-only run's one phase. */
function ceoItems(run: RunRecord, findings: ReturnType<typeof allFindings>) {
  const consensus = run.phases.ceo?.consensus;
  if (consensus == null) return [];
  const current = new Set([run.phases.ceo!.native.attempt, run.phases.ceo!.outside.attempt]);
  return draftGate([{ consensus, findings: findings.filter((f) => current.has(f.attempt)) }]).items;
}
