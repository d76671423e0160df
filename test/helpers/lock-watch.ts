import { lstatSync, lutimesSync } from 'node:fs';
import { until } from './procs.ts';

/**
 * Waits until some process reads `path` (a lock file or symlink): its atime is set an
 * hour before its mtime, and a read moves it (relatime, the Linux default, and
 * strictatime do; a noatime mount would not, and this then times out saying so).
 */
export async function readBy(path: string, what: string, ms = 20_000): Promise<void> {
  const { mtime } = lstatSync(path);
  lutimesSync(path, new Date(mtime.getTime() - 3_600_000), mtime);
  await until(() => lstatSync(path).atimeMs > mtime.getTime() - 60_000, ms, `${what} (a read of ${path}; needs atime updates)`);
}

/**
 * Waits until a lock taker has looked at the holder's lock twice: it judged the holder
 * and came back to look again, so it decided to wait, not to take the lock over. A
 * positive sign of waiting, where a fixed sleep would only hope for it.
 */
export async function waitingOn(lock: string, who: string): Promise<void> {
  await readBy(lock, `${who}'s first look at the lock`);
  await readBy(lock, `${who}'s second look at the lock`);
}
