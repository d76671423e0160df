import { closeSync, constants, fstatSync, ftruncateSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import { tryReadBounded } from '../fs/read-bounded.ts';

// Where a lane's stream stood when its state on this state root last matched it: a lane
// that comes back to a worker that ran it before continues from the worker's own store
// only when the stream still ends there (see crew-worker.ts).

/** The file under a lane's queue directory naming the stream id its state here was last mirrored up to. */
function positionFile(dir: string): string {
  return join(dir, 'mirrored');
}

/** The size of the one record the position file holds: a stream id (at most 34 characters) padded. */
const RECORD = 64;

/**
 * The id of the lane's newest stream entry when its state on this state root last matched
 * the stream (restored from it, or appended to it), or null. Not durable: one lost to a
 * crash makes the lane restore from its stream, which holds everything this worker
 * mirrored; never the other way round. So anything but a small regular file there (a
 * FIFO, a directory, a symlink, something huge) reads as lost, without blocking.
 */
export function readPosition(dir: string): string | null {
  const read = tryReadBounded(positionFile(dir), RECORD * 4, { noFollow: true });
  return read.ok ? read.bytes.toString('utf8').trim() : null;
}

/**
 * Records where the lane's stream stood when its state here last matched it: written in
 * place, one fixed-size record, at every append of the lane's mirror. A temp file and a
 * rename each time waited on the file system's journal while the store's commits flushed
 * (about 1 ms a write in a worker's profile, 11 writes a lane). A write torn by a crash
 * reads as an id the stream never had, which is what a lost one does: the lane restores
 * from its stream. Written in place only into a regular file of its own (never through a
 * symlink, never blocking on a FIFO); anything else there is replaced whole, as before,
 * and a position that cannot be written at all is a lost one.
 */
export function writePosition(dir: string, top: string): void {
  const file = positionFile(dir);
  const record = Buffer.from(`${top.padEnd(RECORD - 1)}\n`);
  try {
    const fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o644);
    try {
      const stat = fstatSync(fd);
      if (stat.isFile()) {
        writeSync(fd, record, 0, record.length, 0);
        // Once per file at most: a record of another size there (written by other code) is cut to this one.
        if (stat.size !== record.length) ftruncateSync(fd, record.length);
        return;
      }
    } finally {
      closeSync(fd);
    }
  } catch {
    // A symlink (ELOOP), a FIFO without a reader (ENXIO), a directory (EISDIR): replaced below.
  }
  try {
    writeFileAtomic(file, record, 0o644, false);
  } catch {
    // Lost: the lane restores from its stream when it comes back here.
  }
}
