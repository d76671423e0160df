import { realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { LanewardError } from '../../formats/codes/error.ts';
import { sha256 } from '../../formats/text/sha256.ts';
import { parseReviewResult } from '../../formats/review/result.ts';
import { PHASES, type PhaseId, type RunRecord, type VoiceId } from '../../formats/review/run-record.ts';
import { isBoundedReadError, readBounded, type BoundedRead, type BoundedReadError } from '../fs/read-bounded.ts';
import { runCommand } from './commit.ts';
import type { Command } from './core/machine.ts';
import { phaseOf } from './core/records.ts';
import { locateRun } from './locate.ts';
import type { PlanReport } from './report.ts';
import type { PlanEnv } from './settings.ts';

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

 *
 * `journal`: commands committed in the same transaction before the submit (`plan run`
 * journals the supervision's outcome with the result it binds: one flush, not two).
 */
export async function planSubmit(options: SubmitOptions, planEnv: PlanEnv, journal: readonly Command[] = []): Promise<PlanReport> {
  const phaseId = checkPhase(options.phase);
  const voice = checkVoice(options.voice);
  const located = locateRun(options.out, planEnv);
  const outcome = options.unavailable ?? options.failed;
  if (outcome !== undefined) {
    if (voice !== 'outside') throw new LanewardError('USAGE', '--unavailable and --failed close the outside voice only');
    if (options.unavailable !== undefined && options.failed !== undefined) throw new LanewardError('USAGE', '--unavailable and --failed exclude each other');
  }
  const attempt = options.attempt ?? onlyOpenAttempt(located.record, phaseId, voice, options.record !== undefined || outcome !== undefined);
  const snapshot = phaseOf(located.record, phaseId).snapshot ?? located.record.snapshot;
  const usage = options.usageUsd === undefined ? {} : { usageUsd: options.usageUsd };
  if (outcome !== undefined) {
    const kind = options.unavailable !== undefined ? 'unavailable' as const : 'failed' as const;
    return (await runCommand(located, planEnv, [...journal, { type: 'submit', input: { attempt, phase: phaseId, voice, snapshot, kind, why: outcome, ...usage } }], { open: false })).report;
  }
  const file = options.result ?? options.record;
  if (file === undefined || (options.result !== undefined && options.record !== undefined)) {
    throw new LanewardError('USAGE', 'pass exactly one of --result <file> or --record <file>');
  }
  if (options.model === undefined || options.model.trim() === '') throw new LanewardError('USAGE', '--model <id> is required');
  if (options.attest !== undefined && options.record === undefined) throw new LanewardError('USAGE', '--attest applies to hand-run records (--record) only');
  const path = resolve(planEnv.cwd, file);
  // The file is read first and compared by the identity of the very descriptor read: a
  // link swapped in after a check would otherwise pass it. Another attempt's result file,
  // by name or by identity, is refused before an unreadable file is.
  let read: BoundedRead | undefined;
  let failure: BoundedReadError | undefined;
  try {
    read = readBounded(path, MAX_RESULT_BYTES);
  } catch (error) {
    if (!isBoundedReadError(error)) throw error;
    failure = error;
  }
  otherAttemptsFile(located.record, attempt, path, located.runDir, read === undefined ? null : `${read.stat.dev}:${read.stat.ino}`);
  if (read === undefined) throw new LanewardError('RESULT_UNREADABLE', `${path} ${failure!.message}`, { path });
  const digest = sha256(read.bytes);
  const parsed = parseReviewResult(read.bytes, { phase: phaseId, snapshot, record: options.record !== undefined, attested: options.attest !== undefined });
  const family = planEnv.settings.familyOf(options.model);
  const input = {
    attempt, phase: phaseId, voice, snapshot, kind: 'result' as const, digest, model: options.model, family, ...usage,
    findings: parsed.ok ? parsed.findings : [],
    receipt: parsed.ok ? parsed.receipt : 'input' as const,
    runner: options.record !== undefined ? 'hand-run record' : (options.runner ?? 'host-subagent'),
    attest: options.attest ?? null,
    ...(parsed.ok ? {} : { invalid: new LanewardError(parsed.code, parsed.message, { path: parsed.line === null ? basename(file) : `${basename(file)}:${parsed.line}` }) }),
  };
  const bound = parsed.ok ? { attempt, blob: { bytes: new Uint8Array(read.bytes), findings: parsed.findings } } : undefined;
  return (await runCommand(located, planEnv, [...journal, { type: 'submit', input }], { open: false }, bound)).report;
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
function onlyOpenAttempt(review: RunRecord, phase: PhaseId, voice: VoiceId, allowed: boolean): string {
  if (!allowed) throw new LanewardError('USAGE', '--attempt <id> is required (the id on the ATTEMPT line)');
  const open = Object.values(review.attempts).filter((a) => a.phase === phase && a.voice === voice && a.state === 'open');
  if (open.length !== 1) throw new LanewardError('USAGE', `--attempt is required: ${open.length} attempts of ${phase} ${voice} are open`);
  return open[0]!.id;
}

/**
 * Another attempt's result file is never bound to this one, whatever it holds. Paths are
 * compared resolved (symlinks, `..`, a run directory reached by another name), and by
 * device and inode (`readId`: of the descriptor the result was read from), so a link to
 * another attempt's result is that result.
 */
function otherAttemptsFile(review: RunRecord, attemptId: string, path: string, runDir: string, readId: string | null): void {
  const given = { path: resolvedFile(path).path, id: readId };
  for (const other of Object.values(review.attempts)) {
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
