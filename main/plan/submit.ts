import { realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { LanewardError } from '../../formats/error.ts';
import { familiesConflict } from '../../formats/model-family.ts';
import { sha256 } from '../../formats/plan-doc.ts';
import { parseReviewResult } from '../../formats/review-result.ts';
import { PHASES, type JournalEvent, type PhaseId, type RunRecord, type VoiceId } from '../../formats/review-run.ts';
import { tryReadBounded } from '../fs/read-bounded.ts';
import { transact } from '../store/store.ts';
import { checkpointAfter } from './checkpoint.ts';
import { describeRun } from './describe.ts';
import { familyOf } from './families.ts';
import { locateRun, type PlanEnv } from './locate.ts';
import { attemptOf, closeIfDone, phaseOf, type Step } from './machine.ts';
import { emptyReport, terminalStatus, type PlanReport } from './report.ts';
import { syncRunFiles } from './run-files.ts';
import { release, settle } from './spend.ts';

export const MAX_RESULT_BYTES = 16 * 1024 * 1024;

export interface SubmitOptions {
  readonly out: string | undefined;
  readonly phase: string | undefined;
  readonly voice: string | undefined;
  readonly attempt?: string;
  readonly result?: string;
  readonly record?: string;
  readonly model?: string;
  readonly runner?: string;
  readonly usageUsd?: number;
  readonly attest?: string;
  readonly unavailable?: string;
  readonly failed?: string;
}

/**
 * `plan submit`: binds one voice's result to its attempt exactly once. The bytes are
 * read and parsed first; the transaction then re-checks the attempt against the
 * committed record, so two racing submits of one attempt bind once: the other sees the
 * bound record and gets the same BOUND line (same bytes) or ATTEMPT_MISMATCH.
 */
export async function planSubmit(options: SubmitOptions, penv: PlanEnv): Promise<PlanReport> {
  const phaseId = checkPhase(options.phase);
  const voice = checkVoice(options.voice);
  const located = locateRun(options.out, penv);
  const { store, runDir } = located;
  const runId = located.record.run;
  const report = emptyReport(runDir, runId);
  const now = new Date().toISOString();
  const outcome = options.unavailable ?? options.failed;
  if (outcome !== undefined) {
    if (voice !== 'outside') throw new LanewardError('USAGE', '--unavailable and --failed close the outside voice only');
    if (options.unavailable !== undefined && options.failed !== undefined) throw new LanewardError('USAGE', '--unavailable and --failed exclude each other');
  }
  const attemptId = options.attempt ?? onlyOpenAttempt(located.record, phaseId, voice, options.record !== undefined || outcome !== undefined);

  let bytes: Buffer | undefined;
  let parsed: ReturnType<typeof parseReviewResult> | undefined;
  let digest = '';
  const snapshot = phaseOf(located.record, phaseId).snapshot ?? located.record.snapshot;
  if (outcome === undefined) {
    const file = options.result ?? options.record;
    if (file === undefined || (options.result !== undefined && options.record !== undefined)) {
      throw new LanewardError('USAGE', 'pass exactly one of --result <file> or --record <file>');
    }
    if (options.model === undefined || options.model.trim() === '') throw new LanewardError('USAGE', '--model <id> is required');
    if (options.attest !== undefined && options.record === undefined) throw new LanewardError('USAGE', '--attest applies to hand-run records (--record) only');
    const path = resolve(penv.cwd, file);
    otherAttemptsFile(located.record, attemptId, path, runDir);
    const read = tryReadBounded(path, MAX_RESULT_BYTES);
    if (!read.ok) throw new LanewardError('RESULT_UNREADABLE', read.detail, { path });
    bytes = read.bytes;
    digest = sha256(bytes);
    parsed = parseReviewResult(bytes, { phase: phaseId, snapshot, record: options.record !== undefined, attested: options.attest !== undefined });
  }
  const family = options.model === undefined ? null : familyOf(options.model, penv.env);

  const record = await transact(store, runId, (current) => {
    if (current === undefined) throw new LanewardError('RUN_NOT_INITIALIZED', `run ${runId} vanished from ${store.root}`);
    const run = current;
    run.commands += 1;
    const events: JournalEvent[] = [];
    // The findings bound by this command are not in the store until it commits.
    const fresh = (id: string) => (id === attemptId && parsed?.ok === true ? parsed.findings : undefined);
    const step: Step = { now, events, findingsOf: (id) => fresh(id) ?? store.blobs.get([runId, id])?.findings ?? [] };
    const attempt = attemptOf(run, attemptId);
    if (attempt === undefined) throw new LanewardError('ATTEMPT_MISMATCH', `no attempt ${attemptId} in run ${runId}`);
    if (attempt.phase !== phaseId || attempt.voice !== voice) {
      throw new LanewardError('ATTEMPT_MISMATCH', `attempt ${attemptId} is phase=${attempt.phase} voice=${attempt.voice}, not phase=${phaseId} voice=${voice}`);
    }
    if (attempt.state === 'bound' && outcome === undefined) {
      if (attempt.bound!.sha256 !== digest) {
        throw new LanewardError('ATTEMPT_MISMATCH', `attempt ${attemptId} is already bound to other bytes (sha256 ${attempt.bound!.sha256.slice(0, 12)})`);
      }
      report.bound.push({ attempt: attempt.id, phase: phaseId, voice, model: attempt.bound!.model, findings: attempt.bound!.findings, sha256: digest, again: true });
      return { change: null, result: run };
    }
    if (attempt.state !== 'open') throw new LanewardError('ATTEMPT_MISMATCH', `attempt ${attemptId} is ${attempt.state}; it can no longer be bound`);
    const phase = phaseOf(run, phaseId);
    if (phase.state !== 'open' || phase[voice].attempt !== attemptId) {
      throw new LanewardError('PHASE_NOT_AWAITING', `phase ${phaseId} is ${phase.state}; it is not waiting for ${voice} attempt ${attemptId}`);
    }
    if ((phase.snapshot ?? run.snapshot) !== snapshot) throw new LanewardError('PHASE_NOT_AWAITING', `phase ${phaseId} moved to another snapshot while the result was read`);

    if (outcome !== undefined) {
      const status = options.unavailable !== undefined ? 'unavailable' : 'failed';
      // Nothing went out for an unavailable voice; a failed call may have cost money.
      if (status === 'unavailable') release(run.spend, attempt);
      else settle(run.spend, attempt, options.usageUsd ?? null);
      attempt.state = status;
      attempt.why = outcome;
      phase.outside = { status, attempt: attempt.id };
      events.push({ type: `voice_${status}`, at: now, attempt: attempt.id, phase: phaseId, why: outcome });
      report.after.push(`VOICE: ${attempt.id} phase=${phaseId} voice=outside status=${status}`);
    } else {
      if (!parsed!.ok) throw new LanewardError(parsed!.code, parsed!.message, { path: parsed!.line === null ? basename(options.result ?? options.record!) : `${basename(options.result ?? options.record!)}:${parsed!.line}` });
      const other = phase[voice === 'native' ? 'outside' : 'native'];
      const otherFamily = other.attempt === null ? undefined : run.attempts[other.attempt]?.bound;
      if (otherFamily !== undefined && family !== null && familiesConflict(family, { family: otherFamily.family, prefix: null, source: null })) {
        throw new LanewardError('MODEL_FAMILY_CONFLICT', `${options.model} and ${otherFamily.model} are both ${family.family}`);
      }
      if (family !== null && family.family === null) {
        const note = `model family unknown for ${options.model} (${phaseId} ${voice})`;
        if (!run.deviations.includes(note)) run.deviations.push(note);
      }
      settle(run.spend, attempt, options.usageUsd ?? null);
      attempt.state = 'bound';
      attempt.bound = {
        sha256: digest,
        model: options.model!,
        family: family?.family ?? null,
        runner: options.record !== undefined ? 'hand-run record' : (options.runner ?? 'host-subagent'),
        receipt: parsed!.receipt,
        attest: options.attest ?? null,
        findings: parsed!.findings.length,
        usage_usd: options.usageUsd ?? null,
        at: now,
      };
      phase[voice] = { status: 'completed', attempt: attempt.id };
      events.push({ type: 'result_bound', at: now, attempt: attempt.id, phase: phaseId, voice, sha256: digest, findings: parsed!.findings.length, receipt: parsed!.receipt });
      report.bound.push({ attempt: attempt.id, phase: phaseId, voice, model: options.model!, findings: parsed!.findings.length, sha256: digest, again: false });
    }
    const consensus = closeIfDone(run, phase, step);
    if (consensus !== null) {
      report.closed.push({ phase: phaseId, confirmed: consensus.confirmed, unverified: consensus.unverified, disagree: consensus.disagree, new: consensus.new, native_only: consensus.native_only, coverage: consensus.coverage });
    }
    run.updated_at = now;
    const blobs = outcome === undefined && parsed!.ok ? [{ key: [runId, attempt.id] as [string, string], value: { bytes: new Uint8Array(bytes!), findings: parsed!.findings } }] : [];
    return { change: { record: run, events, blobs }, result: run };
  });
  syncRunFiles(store, record, runDir);
  checkpointAfter(store, record, runDir, penv.env, report.after);
  describeRun(record, runDir, report, { open: false });
  report.status = terminalStatus(record.state);
  return report;
}

function checkPhase(raw: string | undefined): PhaseId {
  if (raw === undefined || !(PHASES as readonly string[]).includes(raw)) throw new LanewardError('USAGE', `--phase must be one of ${PHASES.join(', ')}, got ${JSON.stringify(raw ?? '')}`);
  return raw as PhaseId;
}

function checkVoice(raw: string | undefined): VoiceId {
  if (raw !== 'native' && raw !== 'outside') throw new LanewardError('USAGE', `--voice must be native or outside, got ${JSON.stringify(raw ?? '')}`);
  return raw;
}

/** --attempt may be left out for a record or an outcome when exactly one attempt is open. */
function onlyOpenAttempt(run: RunRecord, phase: PhaseId, voice: VoiceId, allowed: boolean): string {
  if (!allowed) throw new LanewardError('USAGE', '--attempt <id> is required (the id on the ATTEMPT line)');
  const open = Object.values(run.attempts).filter((a) => a.phase === phase && a.voice === voice && a.state === 'open');
  if (open.length !== 1) throw new LanewardError('USAGE', `--attempt is required: ${open.length} attempts of ${phase} ${voice} are open`);
  return open[0]!.id;
}

/**
 * Another attempt's result file is never bound to this one, whatever it holds. Paths are
 * compared resolved (symlinks, `..`, a run directory reached by another name), and by
 * device and inode when both files exist, so a link to another attempt's result is that
 * result.
 */
function otherAttemptsFile(run: RunRecord, attemptId: string, path: string, runDir: string): void {
  const given = resolvedFile(path);
  for (const other of Object.values(run.attempts)) {
    if (other.id === attemptId) continue;
    const theirs = resolvedFile(join(runDir, other.result));
    if (given.path === theirs.path || (given.id !== null && given.id === theirs.id)) {
      throw new LanewardError('ATTEMPT_MISMATCH', `${basename(path)} is the result file of attempt ${other.id}, not ${attemptId}`);
    }
  }
}

/** A file's real path (its parent's, plus its name, while it does not exist) and its dev:ino. */
function resolvedFile(path: string): { path: string; id: string | null } {
  let id: string | null = null;
  try {
    const stat = statSync(path, { throwIfNoEntry: false });
    if (stat !== undefined) id = `${stat.dev}:${stat.ino}`;
  } catch {
    // A link loop or an unreadable directory: the path comparison still applies.
  }
  try {
    return { path: realpathSync(path), id };
  } catch {
    try {
      return { path: join(realpathSync(dirname(path)), basename(path)), id };
    } catch {
      return { path: resolve(path), id };
    }
  }
}
