import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readlinkSync, readSync, realpathSync, type Dirent, type Stats } from 'node:fs';
import type { RunFile, RunFileSkip } from '../../formats/console/lane-story.ts';

// A run directory is written by children laneward supervises but does not trust (an
// agent, a reviewer): it may hold links out of it, FIFOs, huge or binary files and names
// with any byte in them. Listing it for a page reads only what is plainly inside it.

export interface RunFilesOptions {
  /** Files listed at most (the first, by path). Default 200. */
  readonly maxFiles?: number;
  /** Text shown per file at most, in bytes. Default 64 KiB. */
  readonly maxFileBytes?: number;
  /** Text shown across all files at most, in bytes. Default 1 MiB. */
  readonly maxTotalBytes?: number;
  /** Entries the walk visits at most before it stops counting. Default 20,000. */
  readonly maxEntries?: number;
  /** Top-level directories never entered nor listed (an agent lane's git worktree). Default ['worktree']. */
  readonly skipDirs?: readonly string[];
}

export interface RunFiles {
  readonly files: RunFile[];
  /** Files past `maxFiles`; `exact` false when the walk stopped at its own bound first. */
  readonly leftOut: { readonly count: number; readonly exact: boolean };
}

const MAX_DEPTH = 32;
const SLASH = Buffer.from('/');
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const lenientUtf8 = new TextDecoder('utf-8');

/**
 * The run directory's files, sorted by path (bytes), each with its text up to the bounds.
 * Nothing is followed: a symlink is listed, never read; a FIFO, socket or device is listed
 * from lstat, never opened; a regular file is opened O_NOFOLLOW|O_NONBLOCK and read only
 * if that descriptor is a regular file of one link that resolves inside the directory. A directory
 * that does not exist lists nothing. Only reads: never writes, never changes a time but atime.
 */
export function readRunFiles(dir: string, options: RunFilesOptions = {}): RunFiles {
  const maxFiles = options.maxFiles ?? 200;
  let root: Buffer;
  try {
    root = realpathSync(dir, { encoding: 'buffer' });
  } catch {
    return { files: [], leftOut: { count: 0, exact: true } };
  }
  const walked = walk(root, options.maxEntries ?? 20_000, new Set(options.skipDirs ?? ['worktree']));
  walked.paths.sort(Buffer.compare);
  const shown = walked.paths.slice(0, maxFiles);
  let budget = options.maxTotalBytes ?? 1024 * 1024;
  const files = shown.map((rel) => {
    const file = readRunFile(root, rel, Math.min(options.maxFileBytes ?? 64 * 1024, budget));
    budget -= file.text === null ? 0 : Buffer.byteLength(file.text);
    return file;
  });
  return { files, leftOut: { count: walked.paths.length - shown.length, exact: walked.exact } };
}

/** Every non-directory entry under `root` (relative paths as bytes), bounded. */
function walk(root: Buffer, maxEntries: number, skipDirs: ReadonlySet<string>): { paths: Buffer[]; exact: boolean } {
  const paths: Buffer[] = [];
  let visited = 0;
  let exact = true;
  const visit = (rel: Buffer | null, depth: number) => {
    let entries: Dirent<Buffer>[];
    try {
      entries = readdirSync(rel === null ? root : join(root, rel), { encoding: 'buffer', withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (++visited > maxEntries) {
        exact = false;
        return;
      }
      const path = rel === null ? entry.name : join(rel, entry.name);
      if (!isDirectory(entry, root, path)) paths.push(path);
      else if (rel === null && skipDirs.has(entry.name.toString('utf8'))) continue;
      else if (depth < MAX_DEPTH) visit(path, depth + 1);
      else exact = false;
    }
  };
  visit(null, 0);
  return { paths, exact };
}

/** A directory by the entry's own type (never through a link); lstat only where the file system gave no type. */
function isDirectory(entry: Dirent<Buffer>, root: Buffer, rel: Buffer): boolean {
  if (entry.isDirectory()) return true;
  if (entry.isFile() || entry.isSymbolicLink() || entry.isFIFO() || entry.isSocket() || entry.isCharacterDevice() || entry.isBlockDevice()) return false;
  try {
    return lstatSync(join(root, rel)).isDirectory();
  } catch {
    return false;
  }
}

/** One file of the listing: its size and text, or why it has none. */
function readRunFile(root: Buffer, rel: Buffer, maxBytes: number): RunFile {
  const path = lenientUtf8.decode(rel);
  const skip = (skipped: RunFileSkip, bytes: number): RunFile => ({ path, bytes, text: null, truncated: false, skipped });
  let stat: Stats;
  try {
    stat = lstatSync(join(root, rel));
  } catch {
    return skip('unreadable', 0);
  }
  if (stat.isSymbolicLink()) return skip('symlink', stat.size);
  if (!stat.isFile()) return skip('special', 0);
  if (stat.nlink > 1) return skip('linked', stat.size);
  if (maxBytes <= 0) return skip('budget', stat.size);
  const read = readInside(root, rel, maxBytes);
  if ('skipped' in read) return skip(read.skipped, read.size ?? stat.size);
  const text = textOf(read.bytes, read.truncated);
  return text === null ? skip('binary', read.size) : { path, bytes: read.size, text, truncated: read.truncated };
}

type Inside = { readonly bytes: Buffer; readonly size: number; readonly truncated: boolean } | { readonly skipped: RunFileSkip; readonly size?: number };

/**
 * The first `maxBytes` of `root/rel`, read only from a descriptor that is a regular file
 * (O_NONBLOCK: a FIFO swapped in after the lstat cannot hang the open) and that resolves
 * inside `root` (a directory on its path swapped for a link after the walk leads out).
 */
function readInside(root: Buffer, rel: Buffer, maxBytes: number): Inside {
  let fd: number;
  try {
    fd = openSync(join(root, rel), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    return { skipped: (error as NodeJS.ErrnoException).code === 'ELOOP' ? 'symlink' : 'unreadable' };
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { skipped: 'special', size: 0 };
    // A second name of one file is no proof of where it lives: a hard link made in the run
    // directory to a file outside it (/etc/shadow, another lane's key) resolves inside.
    if (stat.nlink > 1) return { skipped: 'linked', size: stat.size };
    if (!resolvesInside(fd, root, rel)) return { skipped: 'outside', size: stat.size };
    const bytes = Buffer.allocUnsafe(maxBytes + 1);
    let length = 0;
    while (length < bytes.length) {
      const n = readSync(fd, bytes, length, bytes.length - length, length);
      if (n === 0) break;
      length += n;
    }
    const truncated = length > maxBytes;
    return { bytes: bytes.subarray(0, Math.min(length, maxBytes)), size: Math.max(stat.size, length), truncated };
  } catch {
    return { skipped: 'unreadable' };
  } finally {
    closeSync(fd);
  }
}

/**
 * One file of a run directory by its relative path ('/'-separated), read as the listing
 * reads files: null unless it is a regular file of one link inside the directory of at most `maxBytes`.
 */
export function readRunBytes(dir: string, rel: string, maxBytes: number): Buffer | null {
  let root: Buffer;
  try {
    root = realpathSync(dir, { encoding: 'buffer' });
  } catch {
    return null;
  }
  const read = readInside(root, Buffer.from(rel), maxBytes);
  return 'bytes' in read && !read.truncated ? read.bytes : null;
}

/** Where the open descriptor really is (Linux names it in /proc), else where its path resolves now. */
function resolvesInside(fd: number, root: Buffer, rel: Buffer): boolean {
  let real: Buffer;
  try {
    real = readlinkSync(`/proc/self/fd/${fd}`, { encoding: 'buffer' });
  } catch {
    try {
      real = realpathSync(join(root, rel), { encoding: 'buffer' });
    } catch {
      return false;
    }
  }
  const prefix = Buffer.concat([root, SLASH]);
  return real.length > prefix.length && real.subarray(0, prefix.length).equals(prefix);
}

/**
 * Text, or null for binary: a NUL byte or bytes that are not UTF-8. A truncated read may
 * end inside a character; that tail is left out rather than taken for binary.
 */
function textOf(bytes: Buffer, truncated: boolean): string | null {
  if (bytes.includes(0)) return null;
  try {
    return truncated ? new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: true }) : strictUtf8.decode(bytes);
  } catch {
    return null;
  }
}

function join(dir: Buffer, name: Buffer): Buffer {
  return Buffer.concat([dir, SLASH, name]);
}
