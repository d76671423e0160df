import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import { errnoCode, LanewardError } from '../../formats/error.ts';

const LOCK_WAIT_MS = 10_000;

/**
 * Adds `consumer` to run.json's consumed_by unless it is there, under an exclusive lock
 * file so two consumers acknowledging at once both land. The new manifest is written to a
 * temp file beside it, synced, then renamed over it: a crash leaves the old manifest or
 * the new one, never half of either.
 */
export function recordConsumer(manifest: string, consumer: string, at: string): { at: string; already: boolean } {
  const release = lock(`${manifest}.lock`);
  try {
    const text = readFileSync(manifest, 'utf8');
    const run = JSON.parse(text) as { consumed_by?: { consumer: string; at: string }[] };
    const earlier = run.consumed_by?.find((entry) => entry.consumer === consumer);
    if (earlier !== undefined) return { at: earlier.at, already: true };
    run.consumed_by = [...(run.consumed_by ?? []), { consumer, at }];
    writeFileAtomic(manifest, `${JSON.stringify(run, null, 2)}\n`);
    return { at, already: false };
  } finally {
    release();
  }
}

/** Takes `path` exclusively; a lock left by a dead process is taken over. */
function lock(path: string): () => void {
  const deadline = Date.now() + LOCK_WAIT_MS;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(path, { force: true });
    } catch (error) {
      if (errnoCode(error) !== 'EEXIST') throw error;
    }
    let holder: number;
    try {
      holder = Number(readFileSync(path, 'utf8') || '0');
    } catch {
      continue; // released between our open and this read
    }
    if (holder > 0 && !alive(holder)) {
      rmSync(path, { force: true });
      continue;
    }
    if (Date.now() > deadline) throw new LanewardError('IO_ERROR', `${path} is held by process ${holder}`, { path });
    Atomics.wait(pause, 0, 0, 20);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errnoCode(error) === 'EPERM';
  }
}
