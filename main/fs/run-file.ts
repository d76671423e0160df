import { LanewardError } from '../../formats/codes/error.ts';
import { isBoundedReadError, readBounded } from './read-bounded.ts';

/**
 * The most laneward reads of one file it keeps in a run or checkpoint directory: a prompt
 * (the plan, up to 4 MiB, plus the consensus before it), a seal (a result, up to 16 MiB),
 * a consensus page, a checkpoint's state.
 */
export const RUN_FILE_MAX = 64 * 1024 * 1024;

/**
 * The one way laneward reads a file it keeps in a run directory or a checkpoint
 * directory: through {@link readBounded} (opened non-blocking, so a FIFO cannot hang the
 * open; fstat of that descriptor, so only a regular file is read; at most `maxBytes`),
 * and never through a symlink, so a link planted at one of its names (to /dev/zero, to a
 * file elsewhere) is refused rather than read or replaced. Undefined when the file does
 * not exist; anything else that is not a regular file of ours is IO_ERROR, never a hang.
 */
export function readRunFile(path: string, maxBytes: number = RUN_FILE_MAX): Buffer | undefined {
  try {
    return readBounded(path, maxBytes, { noFollow: true }).bytes;
  } catch (error) {
    if (isBoundedReadError(error) && error.problem === 'absent') return undefined;
    throw runFileRefused(path, error);
  }
}

/**
 * Whether the run-directory file at `path` holds exactly `want`: false when it is absent,
 * differs, or is a regular file laneward may not read (it is replaced whole, never read
 * past `want`'s length). A symlink or a file that is not regular is IO_ERROR: laneward
 * neither reads nor replaces what it did not write.
 */
export function runFileHolds(path: string, want: Uint8Array): boolean {
  try {
    return Buffer.compare(readBounded(path, want.length, { noFollow: true }).bytes, want) === 0;
  } catch (error) {
    if (!isBoundedReadError(error)) throw error;
    if (error.problem === 'symlink' || error.problem === 'not-a-file') throw runFileRefused(path, error);
    return false;
  }
}

function runFileRefused(path: string, error: unknown): LanewardError {
  const why = isBoundedReadError(error) ? error.message : 'cannot be read';
  return new LanewardError('IO_ERROR', `${path} ${why}; laneward reads and replaces only regular files it wrote there: remove it, then run plan resume`, { path, cause: error });
}
