import { closeSync, constants, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

// Where a lane's stream stood when its state on this state root last matched it: a lane
// that comes back to a worker that ran it before continues from the worker's own store
// only when the stream still ends there (see crew-worker.ts).

/** The file under a lane's queue directory naming the stream id its state here was last mirrored up to. */
function positionFile(dir: string): string {
  return join(dir, 'mirrored');
}

/**
 * The id of the lane's newest stream entry when its state on this state root last matched
 * the stream (restored from it, or appended to it), or null. Not durable: one lost to a
 * crash makes the lane restore from its stream, which holds everything this worker
 * mirrored; never the other way round.
 */
export function readPosition(dir: string): string | null {
  try {
    return readFileSync(positionFile(dir), 'utf8').trim();
  } catch {
    return null;
  }
}

/** The size of the one record the position file holds: a stream id (at most 34 characters) padded. */
const RECORD = 64;

/**
 * Records where the lane's stream stood when its state here last matched it: written in
 * place, one fixed-size record, at every append of the lane's mirror. A temp file and a
 * rename each time waited on the file system's journal while the store's commits flushed
 * (about 1 ms a write in a worker's profile, 11 writes a lane). A write torn by a crash
 * reads as an id the stream never had, which is what a lost one does: the lane restores
 * from its stream.
 */
export function writePosition(dir: string, top: string): void {
  const record = Buffer.from(`${top.padEnd(RECORD - 1)}\n`);
  const fd = openSync(positionFile(dir), constants.O_WRONLY | constants.O_CREAT, 0o644);
  try {
    writeSync(fd, record, 0, record.length, 0);
  } finally {
    closeSync(fd);
  }
}
