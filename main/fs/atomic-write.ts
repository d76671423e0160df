import { closeSync, fsyncSync, openSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

let sequence = 0;

/**
 * Replaces `file` with `content` so that a crash at any instant leaves the old bytes or
 * the new, never half: a temp file beside it, written and synced, renamed over it, then
 * the directory synced so the rename itself is durable. The file keeps its mode, or gets
 * `mode` when it is new.
 */
export function writeFileAtomic(file: string, content: string | Uint8Array, mode = 0o644): void {
  const temp = join(dirname(file), `.${basename(file)}.${process.pid}.${Date.now()}.${sequence++}.tmp`);
  const keep = statSync(file, { throwIfNoEntry: false })?.mode;
  const fd = openSync(temp, 'wx', (keep ?? mode) & 0o777);
  try {
    writeSync(fd, typeof content === 'string' ? Buffer.from(content) : content);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(temp, { force: true });
    throw error;
  }
  closeSync(fd);
  try {
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  syncDirectory(dirname(file));
}

/** Makes a directory's entries (a rename, a new link) durable. */
export function syncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
