import { join } from 'node:path';
import { isLanewardError, LanewardError, toError } from '../../formats/codes/error.ts';
import { sha256 } from '../../formats/text/sha256.ts';
import type { RunRecord } from '../../formats/review/run-record.ts';
import type { RunManifest } from '../../formats/schemas/run.ts';
import { validateRun } from '../../workers/validate/validate-run.ts';
import { draftGate } from '../../formats/gate/draft.ts';
import { syncDirectory, syncFile } from '../fs/atomic-write.ts';
import type { Store } from '../store/store.ts';
import { commit, settleCommand } from './commit.ts';
import { numberedFindings, type NumberedFinding } from './core/findings.ts';
import { renderCeoReview, renderPlanMd, renderReviewRecord } from './files/export-docs.ts';
import { decisionRows, findingRows, keptRows, taskRows, timingDocument } from './files/export-rows.ts';
import { gateDocument } from './files/gate-document.ts';
import { ensureFile, sealName, syncRunFiles } from './files/run-files.ts';
import { locateRun } from './locate.ts';
import { emptyReport, terminalStatus, type PlanReport } from './report.ts';
import type { PlanEnv } from './settings.ts';

export interface ExportOptions {
  readonly out: string | undefined;
}

/**
 * `plan export`: renders every artifact from the store into the run directory, each
 * through temp file + rename, run.json last with every hash, then validates the result
 * in-process. An export that does not validate is a failure (EXPORT_INVALID), never
 * printed as success. Journaled as started and done, so `resume` finishes a killed one.
 */
export async function planExport(options: ExportOptions, planEnv: PlanEnv): Promise<PlanReport> {
  const located = locateRun(options.out, planEnv);
  const report = emptyReport(located.runDir, located.record.run);
  const done = await exportRun(located, located.record, report, 'command');
  return settleCommand(located, done, planEnv, report, { open: false, files: false });
}

/**
 * Where an export starts from: `plan export` itself, `plan resume` finishing one that was
 * started and killed, or a record whose export is journaled already (`review`: a CEO-only
 * review that ended, or a lane's run restored on another queue worker), written again.
 */
export type ExportFrom = 'command' | 'resume' | 'review';

/**
 * Every export, wherever it starts: `command` journals it started, writes, then done;
 * `resume` writes the started one, then journals it finished; `review` writes only. The
 * artifacts are written and validated in one place ({@link writeArtifacts}). Returns the
 * record as it stands after.
 */
export async function exportRun(located: { readonly store: Store; readonly runDir: string }, review: RunRecord, report: PlanReport, from: ExportFrom): Promise<RunRecord> {
  const { store, runDir } = located;
  if (from === 'command') {
    const started = await commit(store, review.run, { type: 'export', input: { state: 'started' } }, report);
    await writeArtifacts(store, started, runDir, report);
    return commit(store, started.run, { type: 'export', input: { state: 'done' } }, report);
  }
  await writeArtifacts(store, review, runDir, report);
  return from === 'resume' ? commit(store, review.run, { type: 'finish-export', input: { by: 'resume' } }, report) : review;
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
async function writeArtifacts(store: Store, review: RunRecord, runDir: string, report: PlanReport): Promise<void> {
  // Decoded once: the consensus pages and every artifact take their ids and titles from here.
  const findings = numberedFindings(review, { findingsOf: (id) => store.blobs.get([review.run, id])?.findings ?? [] });
  await syncRunFiles(store, review, runDir, 'full', findings);
  const kept = review.ceo_only ? keptRows(review, ceoItems(review, findings)) : [];
  const decisions = review.ceo_only ? kept : decisionRows(review);
  const tasks = taskRows(review, decisions, findings);
  const files: [string, string][] = [
    ...(review.ceo_only ? [['ceo-review.md', renderCeoReview(review, findings, kept)] as [string, string]] : []),
    ['plan.md', renderPlanMd(review, findings)],
    ['review-record.md', renderReviewRecord(review)],
    ['decisions.jsonl', jsonl(decisions)],
    ['findings.jsonl', jsonl(findingRows(review, findings))],
    ['tasks.jsonl', jsonl(tasks)],
    ['timing.json', `${JSON.stringify(timingDocument(review), null, 2)}\n`],
  ];
  if (review.gate !== null) files.push(['gate.json', `${JSON.stringify(gateDocument(review), null, 2)}\n`]);
  const artifacts: RunManifest['artifacts'] = {};
  for (const [name, content] of files) {
    // Not synced one by one: every artifact, then the directory, is synced before run.json.
    onDisk(join(runDir, name), () => ensureFile(join(runDir, name), content, undefined, false));
    artifacts[name] = { path: name, sha256: sha256(content) };
  }
  const phases: RunManifest['phases'] = {};
  for (const id of review.order) {
    const phase = review.phases[id]!;
    const entry: Record<string, unknown> = {};
    if (phase.snapshot !== null) entry['snapshot'] = phase.snapshot;
    for (const voice of ['native', 'outside'] as const) {
      const attempt = phase[voice].attempt === null ? undefined : review.attempts[phase[voice].attempt!];
      const outcome: Record<string, unknown> = { status: phase[voice].status };
      if (attempt?.state === 'bound' && attempt.bound !== undefined) {
        const blob = store.blobs.get([review.run, attempt.id]);
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
    run: review.run,
    status: terminalStatus(review.state) as RunManifest['status'],
    required_phases: review.order,
    phases,
    artifacts,
    session_kind: review.session_kind,
    counts: {
      decisions: decisions.length,
      decisions_pending: decisions.filter((d) => d.status === 'pending').length,
      findings: findings.length,
      tasks: tasks.length,
    },
    gate_rev: review.gate_rev,
    deviations: review.deviations,
  };
  // Files other commands wrote without fsync become durable before run.json names them,
  // and run.json (written durably, last) before export is recorded done.
  for (const entry of Object.values(artifacts).map((a) => a.path)) onDisk(join(runDir, entry), () => syncFile(join(runDir, entry)));
  onDisk(runDir, () => syncDirectory(runDir));
  onDisk(join(runDir, 'run.json'), () => ensureFile(join(runDir, 'run.json'), `${JSON.stringify(manifest, null, 2)}\n`, undefined, false));
  onDisk(join(runDir, 'run.json'), () => syncFile(join(runDir, 'run.json')));
  onDisk(runDir, () => syncDirectory(runDir));
  const verdict = validateRun(join(runDir, 'run.json'));
  if (!verdict.valid) {
    const first = verdict.errors[0];
    throw new LanewardError('EXPORT_INVALID', `${verdict.errors.length} validation error(s); first: ${first?.code} ${first?.message} at ${first?.path}`, { path: join(runDir, 'run.json') });
  }
  report.after.push({ fact: 'exported', run: review.run, files: Object.keys(artifacts).length + 1, runJson: join(runDir, 'run.json') });
  report.after.push({ fact: 'artifact_valid', run: review.run, status: verdict.status, attested: attested(review) });
}

function attested(review: RunRecord): number {
  return Object.values(review.attempts).filter((a) => a.state === 'bound' && a.bound?.receipt === 'attested').length;
}

function jsonl(rows: readonly unknown[]): string {
  return rows.map((row) => `${JSON.stringify(row)}\n`).join('');
}

/** The items a gate would have asked of a CEO-only run's one phase. */
function ceoItems(review: RunRecord, findings: readonly NumberedFinding[]) {
  const consensus = review.phases.ceo?.consensus;
  if (consensus == null) return [];
  const current = new Set([review.phases.ceo!.native.attempt, review.phases.ceo!.outside.attempt]);
  return draftGate([{ consensus, findings: findings.filter((f) => current.has(f.attempt)) }]).items;
}
