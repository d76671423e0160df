import { closeSync, constants, fsyncSync, linkSync, lstatSync, openSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, isAbsolute, resolve, sep } from 'node:path';
import { errnoCode, LanewardError } from '../../formats/codes/error.ts';
import { MAX_RECEIPT_BYTES, parseReceipt, type Receipt } from '../../formats/supervision/receipt.ts';
import { readBounded } from '../fs/read-bounded.ts';

const refuse = (message: string, path: string) => new LanewardError('RECEIPT_INVALID', message, { path });

/**
 * Refuses a receipt path reached through a symlink anywhere on it, or whose parent is
 * not an existing directory. Returns the absolute path.
 */
export function checkReceiptPath(file: string): string {
  const absolute = isAbsolute(file) ? file : resolve(file);
  if (basename(absolute) === '' || absolute.endsWith(sep)) throw refuse(`${file} names a directory`, file);
  let prefix = '';
  for (const part of absolute.split(sep).slice(1)) {
    prefix += `${sep}${part}`;
    let stat;
    try {
      stat = lstatSync(prefix);
    } catch (error) {
      if (errnoCode(error) === 'ENOENT' && prefix === absolute) break;
      throw refuse(`${prefix} does not exist`, file);
    }
    if (stat.isSymbolicLink()) throw refuse(`${prefix} is a symlink`, file);
    if (prefix !== absolute && !stat.isDirectory()) throw refuse(`${prefix} is not a directory`, file);
  }
  return absolute;
}

/**
 * Publishes a receipt exclusively: written and synced under a temp name, then hard-linked
 * to its path, which fails if anything is there. A reader never sees half a receipt and an
 * existing one is never replaced. The file is read-only (0400) with one link.
 */
export function publishReceipt(file: string, receipt: Receipt): void {
  const absolute = checkReceiptPath(file);
  const temp = `${dirname(absolute)}${sep}.${basename(absolute)}.${process.pid}.tmp`;
  const fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o400);
  try {
    writeSync(fd, `${JSON.stringify(receipt)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(temp, absolute);
  } catch (error) {
    if (errnoCode(error) === 'EEXIST') throw new LanewardError('RECEIPT_EXISTS', `${file} exists and is never replaced`, { path: file });
    throw error;
  } finally {
    rmSync(temp, { force: true });
  }
  const dir = openSync(dirname(absolute), 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}

/**
 * How long after its startedAt a receipt's inode may last have changed. `start` writes,
 * syncs, links and unlinks within milliseconds; the slack only absorbs a slow disk.
 */
const RECEIPT_CHANGE_SLACK_MS = 5_000;

/** Which file a receipt is: recorded at the first launch so later launches can compare. */
export interface ReceiptIdentity {
  readonly dev: number;
  readonly ino: number;
  readonly ctimeMs: number;
}

/**
 * Reads and re-validates a receipt: path, file type, mode, links, size, content, and that
 * the file has not been changed since it was written. Mode 0400 does not stop root, so a
 * receipt whose inode changed (ctime) later than startedAt plus a small slack was edited
 * or touched after `start`, and is refused: a receipt is written once and never again.
 */
export function readReceipt(file: string): { receipt: Receipt; identity: ReceiptIdentity } {
  const absolute = checkReceiptPath(file);
  let read;
  try {
    read = readBounded(absolute, MAX_RECEIPT_BYTES, { noFollow: true });
  } catch (error) {
    throw refuse(`${file} ${(error as Error).message}`, file);
  }
  const { bytes, stat } = read;
  if (stat.nlink !== 1) throw refuse(`${file} has ${stat.nlink} links`, file);
  if ((stat.mode & 0o222) !== 0) throw refuse(`${file} is writable (mode ${(stat.mode & 0o777).toString(8)})`, file);
  const parsed = parseReceipt(bytes.toString('utf8'));
  if (typeof parsed === 'string') throw refuse(parsed, file);
  const startedAt = Date.parse(parsed.startedAt);
  // A receipt that starts later than now would grant more than its budget.
  if (startedAt > Date.now()) throw refuse('startedAt is in the future', file);
  if (stat.ctimeMs > startedAt + RECEIPT_CHANGE_SLACK_MS) {
    throw refuse(`${file} was changed ${Math.round(stat.ctimeMs - startedAt)} ms after its startedAt; a receipt is never touched after start`, file);
  }
  return { receipt: parsed, identity: { dev: stat.dev, ino: stat.ino, ctimeMs: stat.ctimeMs } };
}
