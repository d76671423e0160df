import { randomUUID } from 'node:crypto';
import { linkSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { errnoCode, LanewardError, toError } from '../../formats/codes/error.ts';
import { processAlive, processStart } from '../artifact/process-alive.ts';
import { makeDirs } from '../fs/make-dirs.ts';
import { tryReadBounded } from '../fs/read-bounded.ts';

/** The claim file in a crew's out directory: the crew running there and its process. */
export const OUT_CLAIM = '.laneward-crew';

interface OutHolder {
  readonly crew: string;
  readonly file: string;
  readonly pid: number;
  /** Its start tick (/proc/<pid>/stat field 22): a reused pid is not taken for it. */
  readonly ticks: string;
  readonly since: string;
  readonly token: string;
}

/**
 * Claims the out directory for one crew run: two crews with one out (two crew files in
 * one directory keep the default `runs`) would drive the same run directories and fail
 * each other's lanes. A live holder, whatever its crew or state root, refuses this run
 * (CREW_BUSY) before anything starts; a dead one (pid gone, or reused: start ticks) holds
 * nothing and its claim is taken over. The claim is a file made whole, then linked into
 * place (only one link succeeds). Returns the release.
 */
export function claimOut(out: string, crew: string, file: string): () => void {
  const mine: OutHolder = { crew, file, pid: process.pid, ticks: processStart(process.pid)?.ticks ?? '', since: new Date().toISOString(), token: randomUUID() };
  const claim = join(out, OUT_CLAIM);
  const draft = join(out, `${OUT_CLAIM}.${mine.token}`);
  try {
    makeDirs(out);
    writeFileSync(draft, `${JSON.stringify(mine)}\n`, { mode: 0o644 });
    // Each round either claims, refuses, or removes one dead holder's claim.
    for (;;) {
      try {
        linkSync(draft, claim);
        break;
      } catch (error) {
        if (errnoCode(error) !== 'EEXIST') throw error;
      }
      takeOverDead(out, claim, mine.token);
    }
  } catch (error) {
    if (error instanceof LanewardError) throw error;
    throw new LanewardError('IO_ERROR', `out ${out}: cannot claim it for crew ${crew}: ${toError(error).message}`, { path: out, cause: error });
  } finally {
    rmSync(draft, { force: true });
  }
  return () => {
    if (readHolder(claim)?.token !== mine.token) return;
    try {
      unlinkSync(claim);
    } catch {
      // Gone already: nothing held.
    }
  };
}

/**
 * Refuses for a live holder; moves a dead holder's claim aside (a rename: one mover wins)
 * and removes it. A live claim moved aside by mistake (taken over by another run between
 * the read and the rename) is put back and refuses this run.
 */
function takeOverDead(out: string, claim: string, token: string): void {
  const held = readHolder(claim);
  if (held !== undefined && alive(held)) throw busy(out, held);
  const aside = join(out, `${OUT_CLAIM}.dead.${token}`);
  try {
    renameSync(claim, aside);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return;
    throw error;
  }
  const moved = readHolder(aside);
  if (moved !== undefined && moved.token !== held?.token && alive(moved)) {
    try {
      linkSync(aside, claim);
    } catch {
      // Claimed again meanwhile: that claim stands.
    }
    rmSync(aside, { force: true });
    throw busy(out, moved);
  }
  rmSync(aside, { force: true });
}

function alive(holder: OutHolder): boolean {
  return processAlive(holder.pid, holder.ticks === '' ? {} : { ticks: holder.ticks });
}

function busy(out: string, holder: OutHolder): LanewardError {
  return new LanewardError('CREW_BUSY', `out ${out} is in use by crew ${holder.crew} (${holder.file}), process ${holder.pid} since ${holder.since}`, { path: out });
}

/** The claim's holder; undefined when there is none, or it cannot be read (a dead writer's). */
function readHolder(path: string): OutHolder | undefined {
  const read = tryReadBounded(path, 4096);
  if (!read.ok) return undefined;
  try {
    const value = JSON.parse(read.bytes.toString('utf8')) as Partial<OutHolder>;
    if (typeof value.pid !== 'number' || typeof value.token !== 'string') return undefined;
    return { crew: String(value.crew), file: String(value.file), pid: value.pid, ticks: String(value.ticks ?? ''), since: String(value.since), token: value.token };
  } catch {
    return undefined;
  }
}
