import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { LanewardError, toError } from '../../formats/codes/error.ts';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import { acquireLock, livePidHolding, sweepClaims } from '../fs/file-lock.ts';
import { makeDirs } from '../fs/make-dirs.ts';
import { tryReadBounded } from '../fs/read-bounded.ts';

/** The claim in a crew's out directory: the runtime's file lock, held for the crew's life. */
export const OUT_CLAIM = '.laneward-crew';
/** Beside it, who holds it, for the refusal a second crew prints. */
const HOLDER = '.laneward-crew.json';

interface OutHolder {
  readonly crew: string;
  readonly file: string;
  readonly pid: number;
  readonly since: string;
}

/**
 * Claims the out directory for one crew run: two crews with one out (two crew files in
 * one directory keep the default `runs`) would drive the same run directories and fail
 * each other's lanes. The claim is the file lock (main/fs/file-lock.ts) taken without
 * waiting: a live holder, whatever its crew or state root, refuses this run (CREW_BUSY)
 * before anything starts; a dead one (pid gone, or reused: start ticks) holds nothing and
 * its claim is taken over, by one taker however many race for it. Returns the release.
 */
export function claimOut(out: string, crew: string, file: string): () => void {
  const claim = join(out, OUT_CLAIM);
  let release: () => void;
  try {
    makeDirs(out);
    release = acquireLock(claim, { waitMs: 0, code: 'CREW_BUSY' });
  } catch (error) {
    if (error instanceof LanewardError && error.code === 'CREW_BUSY') throw busy(out, error);
    if (error instanceof LanewardError) throw error;
    throw new LanewardError('IO_ERROR', `out ${out}: cannot claim it for crew ${crew}: ${toError(error).message}`, { path: out, cause: error });
  }
  try {
    sweepClaims(claim);
    const holder: OutHolder = { crew, file, pid: process.pid, since: new Date().toISOString() };
    writeFileAtomic(join(out, HOLDER), `${JSON.stringify(holder)}\n`, 0o644, false);
  } catch (error) {
    release();
    throw new LanewardError('IO_ERROR', `out ${out}: cannot claim it for crew ${crew}: ${toError(error).message}`, { path: out, cause: error });
  }
  return () => {
    rmSync(join(out, HOLDER), { force: true });
    release();
  };
}

/** The refusal, naming the crew that holds the out directory when it said who it is. */
function busy(out: string, refused: LanewardError): LanewardError {
  // The description is the live holder's only when it names the pid the lock does (a dead
  // holder's may still stand there for the instant before the new one rewrites it).
  const pid = livePidHolding(join(out, OUT_CLAIM));
  const holder = readHolder(join(out, HOLDER));
  if (pid === undefined) return new LanewardError('CREW_BUSY', `out ${out} is in use: ${refused.message}`, { path: out });
  const who = holder === undefined || holder.pid !== pid ? `process ${pid}` : `crew ${holder.crew} (${holder.file}), process ${holder.pid} since ${holder.since}`;
  return new LanewardError('CREW_BUSY', `out ${out} is in use by ${who}`, { path: out });
}

function readHolder(path: string): OutHolder | undefined {
  const read = tryReadBounded(path, 4096, { noFollow: true });
  if (!read.ok) return undefined;
  try {
    const value = JSON.parse(read.bytes.toString('utf8')) as Partial<OutHolder>;
    return typeof value.pid === 'number' ? { crew: String(value.crew), file: String(value.file), pid: value.pid, since: String(value.since) } : undefined;
  } catch {
    return undefined;
  }
}
