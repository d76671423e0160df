import { closeSync, constants, fstatSync, fsyncSync, linkSync, lstatSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, isAbsolute, resolve, sep } from 'node:path';
import { errnoCode, LanewardError } from '../../formats/error.ts';
import { MAX_RECEIPT_BYTES, parseReceipt, type Receipt } from '../../formats/receipt.ts';

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

/** Reads and re-validates a receipt: path, file type, mode, links, size, then content. */
export function readReceipt(file: string): Receipt {
  const absolute = checkReceiptPath(file);
  let fd: number;
  try {
    fd = openSync(absolute, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    throw refuse(errnoCode(error) === 'ENOENT' ? `${file} does not exist` : `${file} cannot be opened`, file);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw refuse(`${file} is not a regular file`, file);
    if (stat.nlink !== 1) throw refuse(`${file} has ${stat.nlink} links`, file);
    if ((stat.mode & 0o222) !== 0) throw refuse(`${file} is writable (mode ${(stat.mode & 0o777).toString(8)})`, file);
    if (stat.size > MAX_RECEIPT_BYTES) throw refuse(`${file} is over ${MAX_RECEIPT_BYTES} bytes`, file);
    const bytes = Buffer.alloc(MAX_RECEIPT_BYTES + 1);
    const n = readSync(fd, bytes, 0, bytes.length, 0);
    const parsed = parseReceipt(bytes.toString('utf8', 0, n));
    if (typeof parsed === 'string') throw refuse(parsed, file);
    // A receipt that starts later than now would grant more than its budget.
    if (Date.parse(parsed.startedAt) > Date.now()) throw refuse('startedAt is in the future', file);
    return parsed;
  } finally {
    closeSync(fd);
  }
}
