import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { errnoCode } from '../../formats/codes/error.ts';

/** Why a bounded read refused a path. */
export type BoundedReadProblem = 'absent' | 'symlink' | 'not-a-file' | 'too-large' | 'unreadable';

export class BoundedReadError extends Error {
  readonly problem: BoundedReadProblem;

  constructor(problem: BoundedReadProblem, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'BoundedReadError';
    this.problem = problem;
  }
}

export function isBoundedReadError(value: unknown): value is BoundedReadError {
  return value instanceof Error && value.name === 'BoundedReadError' && typeof (value as { problem?: unknown }).problem === 'string';
}

/** The bytes read and the fstat of the very descriptor they came from. */
export interface BoundedRead {
  readonly bytes: Buffer;
  readonly stat: Stats;
}

/**
 * The one way laneward reads an input file it does not own (a trust key, a descriptor,
 * its signature, a receipt, a probe log): opened non-blocking, so a FIFO cannot hang the
 * open; a regular file only, by fstat of that same descriptor, so a FIFO or /dev/zero is
 * refused rather than read; at most `maxBytes`, so no budget is spent reading something
 * that is not ours. `noFollow` refuses a symlink as the last component.
 */
export function readBounded(path: string, maxBytes: number, options: { noFollow?: boolean } = {}): BoundedRead {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | (options.noFollow === true ? constants.O_NOFOLLOW : 0));
  } catch (error) {
    const errno = errnoCode(error);
    if (errno === 'ENOENT') throw new BoundedReadError('absent', 'does not exist', error);
    if (errno === 'ELOOP') throw new BoundedReadError('symlink', 'is a symlink', error);
    throw new BoundedReadError('unreadable', `cannot be opened (${errno ?? 'error'})`, error);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new BoundedReadError('not-a-file', `is not a regular file (${fileKind(stat)})`);
    if (stat.size > maxBytes) throw new BoundedReadError('too-large', `is over ${maxBytes} bytes`);
    // Room for the size fstat saw plus one byte, grown (never past the cap plus one) for
    // a file that grows while it is read; a byte past the cap is a refusal.
    let bytes = Buffer.allocUnsafe(Math.min(maxBytes, stat.size) + 1);
    let length = 0;
    for (;;) {
      if (length === bytes.length) {
        const grown = Buffer.allocUnsafe(Math.min(maxBytes + 1, bytes.length * 2));
        bytes.copy(grown, 0, 0, length);
        bytes = grown;
      }
      const n = readSync(fd, bytes, length, bytes.length - length, length);
      if (n === 0) break;
      length += n;
      if (length > maxBytes) throw new BoundedReadError('too-large', `is over ${maxBytes} bytes`);
    }
    return { bytes: bytes.subarray(0, length), stat };
  } catch (error) {
    if (isBoundedReadError(error)) throw error;
    throw new BoundedReadError('unreadable', `cannot be read (${errnoCode(error) ?? 'error'})`, error);
  } finally {
    closeSync(fd);
  }
}

/** What a non-regular file is, in words, for a refusal. */
export function fileKind(stat: Stats): string {
  if (stat.isDirectory()) return 'a directory';
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isSocket()) return 'a socket';
  if (stat.isSymbolicLink()) return 'a symlink';
  return stat.isFile() ? 'a regular file' : 'not a file';
}

export type BoundedResult =
  | { readonly ok: true; readonly bytes: Buffer }
  | { readonly ok: false; readonly reason: BoundedReadProblem; readonly detail: string };

/** {@link readBounded} as data, for callers that turn each refusal into their own code. */
export function tryReadBounded(path: string, maxBytes: number, options: { noFollow?: boolean } = {}): BoundedResult {
  try {
    return { ok: true, bytes: readBounded(path, maxBytes, options).bytes };
  } catch (error) {
    if (!isBoundedReadError(error)) throw error;
    return { ok: false, reason: error.problem, detail: `${path} ${error.message}` };
  }
}
