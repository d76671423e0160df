import { closeSync, constants, fsyncSync, openSync, readdirSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { open, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

let sequence = 0;

/**
 * Replaces `file` with `content` so that a crash at any instant leaves the old bytes or
 * the new, never half: a temp file beside it, written and synced, renamed over it, then
 * the directory synced so the rename itself is durable. The file keeps its mode, or gets
 * `mode` when it is new. `durable: false` skips both syncs: still whole or absent after
 * a process crash, but not promised to survive a power loss (for files derived from a
 * durable record, which any later command rewrites).
 */
export function writeFileAtomic(file: string, content: string | Uint8Array, mode = 0o644, durable = true): void {
  const temp = join(dirname(file), `.${basename(file)}.${process.pid}.${Date.now()}.${sequence++}.tmp`);
  const keep = statSync(file, { throwIfNoEntry: false })?.mode;
  const fd = openSync(temp, 'wx', (keep ?? mode) & 0o777);
  try {
    writeSync(fd, typeof content === 'string' ? Buffer.from(content) : content);
    if (durable) fsyncSync(fd);
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
  if (durable) syncDirectory(dirname(file));
}

/**
 * {@link writeFileAtomic} on the thread pool: many files written at once wait on the disk
 * together. `exact`: the file gets `mode` whatever the one it replaces had (a sealed copy),
 * set as the temp file is created.
 */
export async function writeFileAtomicAsync(file: string, content: string | Uint8Array, mode = 0o644, durable = true, exact = false): Promise<void> {
  const temp = join(dirname(file), `.${basename(file)}.${process.pid}.${Date.now()}.${sequence++}.tmp`);
  const keep = exact ? undefined : (await stat(file).catch(() => undefined))?.mode;
  const handle = await open(temp, 'wx', (keep ?? mode) & 0o777);
  try {
    await handle.writeFile(content);
    if (durable) await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(temp, { force: true });
    throw error;
  }
  await handle.close();
  try {
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  if (durable) {
    const dir = await open(dirname(file), 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  }
}

/** Flushes one file's bytes to disk (opened non-blocking, never through a symlink: a FIFO cannot hang it). */
export function syncFile(file: string): void {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
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

/**
 * The temp names writeFileAtomic uses, `.<name>.<pid>.<ms>.<n>.tmp`, and the run binding's,
 * `.laneward-run.<pid>.<ms>.<n>.tmp` (main/plan/run-binding.ts publishBinding; the first form matches it).
 */
const TEMP = /^\..+\.(\d+)\.\d+\.\d+\.tmp$|^\.laneward-run\.(\d+)\.\d+\.tmp$/;

/**
 * Removes the temp files in `dir` that writers killed mid-write left behind (their pid is
 * gone). A live writer's temp file is kept: it is about to be renamed into place.
 * Returns the names removed.
 */
export function removeStaleTemps(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const match = TEMP.exec(name);
    const pid = match?.[1] ?? match?.[2];
    if (pid === undefined || alive(Number(pid))) continue;
    rmSync(join(dir, name), { force: true });
    removed.push(name);
  }
  return removed;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
