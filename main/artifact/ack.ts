import { lstatSync, readdirSync, statSync, unlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { errnoCode, isLanewardError, LanewardError, toError } from '../../formats/codes/error.ts';
import { issue, type Issue } from '../../formats/codes/issue.ts';
import { appendToArrayMember } from '../../formats/text/json-splice.ts';
import { MAX_LINE_BYTES } from '../../formats/jsonl/lines.ts';
import type { RunManifest } from '../../formats/schemas/run.ts';
import { readJsonDocument } from '../../workers/validate/json-document.ts';
import { locateRun, validateRun } from '../../workers/validate/validate-run.ts';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import { acquireLock, sweepClaims } from '../fs/file-lock.ts';
import { processAlive } from '../process/process-alive.ts';

export type AckOutcome =
  | { readonly acked: true; readonly run: string; readonly at: string; readonly already: boolean }
  | {
      readonly acked: false;
      readonly run: string | null;
      /** Why: ACK_REFUSED at run.json, with the validation errors that led to it. */
      readonly refusal: Issue;
      readonly errors: readonly Issue[];
      readonly errorsOmitted: number;
    };

/**
 * Records that `consumer` read the run: appends `{consumer, at}` to run.json's
 * consumed_by unless the consumer is there already.
 *
 * Under the run's lock, the manifest is read once (never through a symlink), those very
 * bytes are validated, and the new manifest is those bytes with one array item (or the
 * consumed_by member) added: every other byte stays as written. It replaces run.json
 * through a synced temp file and a rename. A symlinked run.json is refused, as is a run
 * that is invalid or would grow past 16 MiB; nothing is written then.
 */
export function acknowledgeRun(target: string, consumer: string, now: () => string): AckOutcome {
  const { manifest } = locateRun(target);
  const name = basename(manifest);
  const refuse = (runManifest: string | null, message: string, errors: readonly Issue[] = [], errorsOmitted = 0): AckOutcome => ({
    acked: false,
    run: runManifest,
    refusal: issue('ACK_REFUSED', name, message),
    errors,
    errorsOmitted,
  });
  if (isSymlink(manifest)) return refuse(null, `${manifest} is a symlink; ack rewrites only a regular run.json`);
  if (lstatSync(manifest, { throwIfNoEntry: false }) === undefined) {
    // Nothing to lock beside a manifest that is not there: report it as validate does.
    const report = validateRun(manifest);
    return refuse(report.run, `${report.errors.length + report.errors_omitted} validation error(s)`, report.errors, report.errors_omitted);
  }

  let release: () => void;
  try {
    release = acquireLock(`${manifest}.lock`);
  } catch (error) {
    if (isLanewardError(error)) throw error;
    throw new LanewardError('IO_ERROR', `cannot create ${manifest}.lock (${errnoCode(error) ?? toError(error).message})`, { path: `${manifest}.lock`, cause: error });
  }
  try {
    sweepClaims(`${manifest}.lock`);
    sweepTemps(manifest);
    // Checked again under the lock: a symlink swapped in meanwhile is refused too.
    if (isSymlink(manifest)) return refuse(null, `${manifest} is a symlink; ack rewrites only a regular run.json`);
    const document = readJsonDocument(manifest, name, { noFollow: true });
    const report = validateRun(manifest, document);
    if (!report.valid || 'issue' in document) {
      const count = report.errors.length + report.errors_omitted;
      return refuse(report.run, `${count} validation error(s)`, report.errors, report.errors_omitted);
    }
    const runManifest = document.value as RunManifest;
    const earlier = runManifest.consumed_by?.find((entry) => entry.consumer === consumer);
    if (earlier !== undefined) return { acked: true, run: runManifest.run, at: earlier.at, already: true };
    const at = now();
    const next = appendToArrayMember(document.bytes, 'consumed_by', (spaced) =>
      spaced ? `{"consumer": ${JSON.stringify(consumer)}, "at": ${JSON.stringify(at)}}` : `{"consumer":${JSON.stringify(consumer)},"at":${JSON.stringify(at)}}`,
    );
    if (next.length > MAX_LINE_BYTES) return refuse(runManifest.run, `recording the consumer would take run.json past 16 MiB (${next.length} bytes)`);
    writeFileAtomic(manifest, next);
    return { acked: true, run: runManifest.run, at, already: false };
  } finally {
    release();
  }
}

function isSymlink(path: string): boolean {
  return lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink() === true;
}

/** The temp names writeFileAtomic gives run.json: `.run.json.<pid>.<ms>.<n>.tmp`. */
function tempPattern(manifest: string): RegExp {
  const name = basename(manifest).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^\\.${name}\\.(\\d+)\\.\\d+\\.\\d+\\.tmp$`);
}

/**
 * Removes temp files an ack killed mid-write left beside run.json. Only run under the
 * lock, so no live ack is writing one; a temp whose writer is still alive (another
 * writer of run.json) is left alone.
 */
function sweepTemps(manifest: string): void {
  const dir = dirname(manifest);
  const pattern = tempPattern(manifest);
  for (const name of readdirSync(dir)) {
    const pid = Number(pattern.exec(name)?.[1] ?? Number.NaN);
    if (Number.isNaN(pid)) continue;
    const path = join(dir, name);
    const writtenAtMs = statSync(path, { throwIfNoEntry: false })?.mtimeMs;
    if (writtenAtMs === undefined) continue;
    if (pid !== process.pid && processAlive(pid, { writtenAtMs })) continue;
    try {
      unlinkSync(path);
    } catch {
      // Gone meanwhile.
    }
  }
}
