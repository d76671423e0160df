import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../fs/atomic-write.ts';

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

/** Records where the lane's stream stood when its state here last matched it. */
export function writePosition(dir: string, top: string): void {
  writeFileAtomic(positionFile(dir), top, 0o644, false);
}
