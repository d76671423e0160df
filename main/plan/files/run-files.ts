import { chmodSync, existsSync } from 'node:fs';
import { isLanewardError, LanewardError, toError } from '../../../formats/codes/error.ts';
import { join } from 'node:path';
import { renderConsensusMarkdown } from '../../../formats/consensus/render.ts';
import { renderPrompt } from '../../../formats/review/prompt.ts';
import type { AttemptRecord, RunRecord } from '../../../formats/review/run-record.ts';
import { writeFileAtomic, writeFileAtomicAsync } from '../../fs/atomic-write.ts';
import { makeDirs } from '../../fs/make-dirs.ts';
import { runFileHolds } from '../../fs/run-file.ts';
import type { Store } from '../../store/store.ts';
import { numberedFindings, type NumberedFinding } from '../core/findings.ts';
import { phaseOf } from '../core/records.ts';
import { renderCheckPrompt } from './check-prompt.ts';
import { gateDocument } from './gate-document.ts';

/** The sealed copy of a bound result: read-only, named after its attempt. */
export function sealName(attempt: AttemptRecord): string {
  return `${attempt.phase}-${attempt.voice}.${attempt.id}.bound.md`;
}

/**
 * Brings the run directory in line with the committed record: prompts of open attempts,
 * seals of bound results (from the bytes the store bound, never the reviewer's file),
 * each closed phase's consensus, and the gate. Every file is derived from the record, so
 * this runs after every command and repairs whatever a crash left unwritten.
 *
 * `light` (after each command) trusts a seal that exists (seals are immutable and written
 * whole) and skips fsync: the files are derived from the committed record and rewritten
 * by any later command. `full` (resume, export) compares every file's bytes and syncs.
 */
export async function syncRunFiles(store: Store, review: RunRecord, runDir: string, mode: 'light' | 'full' = 'light', findings?: readonly NumberedFinding[]): Promise<void> {
  // One run's syncs in this process go one after another, in the order their commands
  // committed: an earlier record's files never land after a later one's.
  const before = syncing.get(runDir) ?? Promise.resolve();
  const mine = before.then(() => writeDerived(store, review, runDir, mode, findings));
  const settled = mine.catch(() => undefined);
  syncing.set(runDir, settled);
  void settled.then(() => {
    if (syncing.get(runDir) === settled) syncing.delete(runDir);
  });
  return mine;
}

const syncing = new Map<string, Promise<void>>();

async function writeDerived(store: Store, review: RunRecord, runDir: string, mode: 'light' | 'full', findings: readonly NumberedFinding[] | undefined): Promise<void> {
  try {
    makeDirs(runDir);
    // Decided here, from what is on disk; written together on the thread pool: creating a
    // file waits on the file system's journal, and many commands' files share its commits.
    const writes = staleRunFiles(store, review, runDir, mode === 'full', findings);
    await Promise.all(writes.map(({ file, bytes, mode: fileMode }) => writeFileAtomicAsync(file, bytes, fileMode ?? 0o644, mode === 'full', fileMode !== undefined)));
  } catch (error) {
    if (isLanewardError(error)) throw error;
    // The state is committed; the files can be written again by any later command.
    throw new LanewardError('IO_ERROR', `${runDir}: ${toError(error).message}; the run state is saved, run plan resume once the directory is writable`, { path: runDir });
  }
}

/**
 * The files the record implies whose bytes on disk differ (or that are missing).
 * `findings`: the run's numbered findings when the caller has them (export), so they are
 * decoded once.
 */
function staleRunFiles(store: Store, review: RunRecord, runDir: string, full: boolean, findings: readonly NumberedFinding[] | undefined): { file: string; bytes: Uint8Array; mode?: number }[] {
  const writes: { file: string; bytes: Uint8Array; mode?: number }[] = [];
  const ensure = (file: string, content: string | Uint8Array, mode?: number): boolean => {
    const bytes = typeof content === 'string' ? Buffer.from(content) : content;
    if (runFileHolds(file, bytes)) return false;
    writes.push(mode === undefined ? { file, bytes } : { file, bytes, mode });
    return true;
  };
  const findingsOf = (id: string) => store.blobs.get([review.run, id])?.findings ?? [];
  for (const attempt of Object.values(review.attempts)) {
    if (attempt.state === 'open') {
      const phase = phaseOf(review, attempt.phase);
      const consensus = review.order
        .slice(0, review.order.indexOf(attempt.phase))
        .map((id) => review.phases[id]?.consensus)
        .filter((c) => c !== null && c !== undefined);
      ensure(join(runDir, attempt.prompt), renderPrompt({
        run: review.run,
        phase: attempt.phase,
        voice: attempt.voice,
        snapshot: phase.snapshot ?? review.snapshot,
        implementation: review.implementation,
        consensus,
        resultPath: join(runDir, attempt.result),
      }));
    } else if (attempt.state === 'bound') {
      if (!full && existsSync(join(runDir, sealName(attempt)))) continue;
      const blob = store.blobs.get([review.run, attempt.id]);
      if (blob !== undefined) ensure(join(runDir, sealName(attempt)), blob.bytes, 0o444);
    }
  }
  // Titles cost a decode of every bound result: made only when a consensus page is written.
  let titles: Map<string, string> | undefined;
  for (const id of review.order) {
    const consensus = review.phases[id]?.consensus;
    if (consensus === null || consensus === undefined) continue;
    const json = join(runDir, `${id}-consensus.json`);
    const md = join(runDir, `${id}-consensus.md`);
    const changed = ensure(json, `${JSON.stringify(consensus, null, 2)}\n`);
    if (full || changed || !existsSync(md)) {
      titles ??= new Map((findings ?? numberedFindings(review, { findingsOf })).map((f) => [f.id, f.title]));
      ensure(md, renderConsensusMarkdown(consensus, titles));
    }
  }
  if (review.gate !== null) ensure(join(runDir, 'gate.json'), `${JSON.stringify(gateDocument(review), null, 2)}\n`);
  for (const gate of [...review.past_gates, ...(review.gate === null ? [] : [review.gate])]) {
    if (gate.implementation !== undefined) ensure(join(runDir, `plan-at-gate.r${gate.rev}.md`), gate.implementation);
  }
  const check = review.gate?.check;
  if (check?.state === 'open') ensure(join(runDir, check.prompt), renderCheckPrompt(review, join(runDir, check.result)));
  return writes;
}

/**
 * Writes the file only when its bytes differ, atomically (durably unless told otherwise);
 * a seal is made read-only. Returns whether it wrote. What is there is read bounded and
 * only when it is a regular file (see runFileHolds): a FIFO, a device or a symlink at the
 * name is IO_ERROR, never a hang.
 */
export function ensureFile(file: string, content: string | Uint8Array, mode?: number, durable = true): boolean {
  const want = typeof content === 'string' ? Buffer.from(content) : content;
  if (runFileHolds(file, want)) return false;
  writeFileAtomic(file, want, mode ?? 0o644, durable);
  if (mode !== undefined) chmodSync(file, mode);
  return true;
}
