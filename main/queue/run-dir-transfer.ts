import { lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, normalize, sep } from 'node:path';
import { LanewardError } from '../../formats/codes/error.ts';

/** One file of a run directory on its way back to the coordinator. */
export interface CarriedFile {
  /** Relative, '/'-separated. */
  readonly path: string;
  /** The bytes, base64. */
  readonly data: string;
}

/** The default bound on what one lane's run directory may carry back. */
export const DEFAULT_MAX_ARTIFACT_BYTES = 16 * 1024 * 1024;
/** The most files one lane's run directory may carry back. */
export const MAX_ARTIFACT_FILES = 10_000;

/**
 * A lane's exported run directory as job data: regular files only (a symlink or a special
 * file is never followed nor read), the agent's worktree left out (its work is on its
 * branch), at most `maxBytes` in all: more is RUN_DIR_TOO_LARGE, naming the size.
 */
export function packRunDir(dir: string, maxBytes = DEFAULT_MAX_ARTIFACT_BYTES): CarriedFile[] {
  const files: CarriedFile[] = [];
  let total = 0;
  const walk = (rel: string) => {
    for (const name of readdirSync(join(dir, rel)).sort()) {
      const path = rel === '' ? name : `${rel}/${name}`;
      if (path === 'worktree') continue;
      const stat = lstatSync(join(dir, path));
      if (stat.isDirectory()) walk(path);
      else if (stat.isFile()) {
        total += stat.size;
        if (files.length >= MAX_ARTIFACT_FILES) throw new LanewardError('RUN_DIR_TOO_LARGE', `${dir} holds more than ${MAX_ARTIFACT_FILES} files`, { path: dir });
        if (total > maxBytes) throw new LanewardError('RUN_DIR_TOO_LARGE', `${dir} holds more than ${maxBytes} bytes of files (at ${path})`, { path: dir });
        files.push({ path, data: readFileSync(join(dir, path)).toString('base64') });
      }
    }
  };
  walk('');
  return files;
}

/**
 * Writes carried files as the run directory `dest`: into a temp directory beside it, then
 * renamed into place (an earlier copy is moved aside first and removed after), so `dest`
 * holds one lane's whole export or the one before it. A path that is absolute, leaves the
 * directory, repeats another or is both a file and a directory is JOB_INVALID and nothing
 * is written.
 */
export function unpackRunDir(files: readonly CarriedFile[], dest: string, maxBytes = DEFAULT_MAX_ARTIFACT_BYTES): void {
  if (!Array.isArray(files) || files.length > MAX_ARTIFACT_FILES) throw new LanewardError('RUN_DIR_TOO_LARGE', `the carried run directory holds more than ${MAX_ARTIFACT_FILES} files, or is not a list`, { path: dest });
  let total = 0;
  const names = new Set<string>();
  const dirs = new Set<string>();
  for (const file of files) {
    if (typeof file !== 'object' || file === null) throw new LanewardError('JOB_INVALID', 'a carried file is not a {path, data} object');
    const path = file.path;
    if (typeof path !== 'string' || typeof file.data !== 'string' || path === '' || isAbsolute(path) || path.includes('\\') || path.includes('\0') || normalize(path).split(sep).includes('..') || normalize(path) !== path.split('/').join(sep)) {
      throw new LanewardError('JOB_INVALID', `a carried file's path ${JSON.stringify(path)} is not inside its run directory`);
    }
    // Twice, or both a file and a directory: not one directory's listing.
    const parts = path.split('/');
    const parents = parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join('/'));
    if (names.has(path) || dirs.has(path) || parents.some((parent) => names.has(parent))) {
      throw new LanewardError('JOB_INVALID', `a carried file's path ${JSON.stringify(path)} repeats another, or is both a file and a directory`);
    }
    names.add(path);
    for (const parent of parents) dirs.add(parent);
    total += Math.floor((file.data.length * 3) / 4);
    if (total > maxBytes) throw new LanewardError('RUN_DIR_TOO_LARGE', `the carried run directory is over ${maxBytes} bytes`, { path: dest });
  }
  const temp = `${dest}.incoming-${process.pid}-${Date.now()}`;
  rmSync(temp, { recursive: true, force: true });
  mkdirSync(temp, { recursive: true });
  try {
    for (const file of files) {
      const target = join(temp, file.path);
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, Buffer.from(file.data, 'base64'), { flag: 'wx' });
    }
    const aside = `${dest}.replaced-${process.pid}-${Date.now()}`;
    let moved = false;
    try {
      renameSync(dest, aside);
      moved = true;
    } catch {
      // No earlier copy.
    }
    renameSync(temp, dest);
    if (moved) rmSync(aside, { recursive: true, force: true });
  } catch (error) {
    rmSync(temp, { recursive: true, force: true });
    throw error;
  }
}
