import { chmodSync, closeSync, fsyncSync, mkdtempSync, openSync, readdirSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { errnoCode, LanewardError } from '../../formats/codes/error.ts';
import { syncDirectory } from '../fs/atomic-write.ts';
import { makeDirs } from '../fs/make-dirs.ts';
import type { InitFile } from './crew-files.ts';

/**
 * The first thing in the way of writing `files` into `dir`, or null when `dir` is absent
 * or empty: a file init would write (named first, since that is what the user would lose),
 * else whatever else is there (init writes a whole directory, never into a used one).
 */
export function firstInTheWay(dir: string, files: readonly InitFile[]): string | null {
  const stat = statSync(dir, { throwIfNoEntry: false });
  if (stat === undefined) return null;
  if (!stat.isDirectory()) return dir;
  for (const file of files) if (statSync(join(dir, file.path), { throwIfNoEntry: false }) !== undefined) return join(dir, file.path);
  const [other] = readdirSync(dir).sort();
  return other === undefined ? null : join(dir, other);
}

const exists = (path: string) => new LanewardError('INIT_EXISTS', `${path} exists; init writes a new crew directory and replaces nothing`, { path });

/**
 * Writes every file into a new directory beside `dir`, each synced, then renames that
 * directory to `dir` in one step: a kill at any instant leaves no crew or the whole crew
 * (at worst a `.<name>.init-*` directory beside it), never a crew file naming missing
 * keys. A `dir` that is not absent or empty is refused (INIT_EXISTS naming what is in
 * the way), before anything is written and again at the rename.
 */
export function writeCrewDir(dir: string, files: readonly InitFile[]): void {
  const inTheWay = firstInTheWay(dir, files);
  if (inTheWay !== null) throw exists(inTheWay);
  const parent = dirname(dir);
  makeDirs(parent);
  const stage = mkdtempSync(join(parent, `.${basename(dir)}.init-`));
  try {
    // mkdtemp makes it 0700; the crew is an ordinary directory (only keys/ is private).
    chmodSync(stage, 0o755);
    const made = new Set<string>([stage]);
    for (const file of files) {
      const path = join(stage, file.path);
      const sub = dirname(path);
      if (!made.has(sub)) {
        makeDirs(sub, { mode: file.path.startsWith('keys/') ? 0o700 : 0o755 });
        made.add(sub);
      }
      writeNew(path, file.content, file.mode);
    }
    for (const sub of made) syncDirectory(sub);
    try {
      // rename(2) replaces an empty directory and refuses a non-empty one: the check above, made atomic.
      renameSync(stage, dir);
    } catch (error) {
      const code = errnoCode(error);
      if (code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'ENOTDIR') throw exists(firstInTheWay(dir, files) ?? dir);
      throw error;
    }
    syncDirectory(parent);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

function writeNew(path: string, content: string, mode: number): void {
  const fd = openSync(path, 'wx', mode);
  try {
    writeSync(fd, Buffer.from(content));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
