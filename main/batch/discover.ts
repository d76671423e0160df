import { lstatSync, opendirSync, statSync } from 'node:fs';
import { join } from 'node:path';

export interface Discovered {
  /** Paths to validate: a run.json, or an input given as such (absent paths included). */
  readonly runs: string[];
  /** Directories given as input that hold no run.json anywhere below them. */
  readonly empty: string[];
}

/**
 * Expands the inputs to run.json paths. A directory holding run.json is one run and is
 * not searched further (runs keep their own subdirectories); any other directory is
 * searched recursively, in name order, without following symlinked directories.
 */
export function discoverRuns(inputs: readonly string[]): Discovered {
  const runs: string[] = [];
  const empty: string[] = [];
  for (const input of inputs) {
    if (!isDirectory(input)) {
      runs.push(input);
      continue;
    }
    const before = runs.length;
    walk(input, runs);
    if (runs.length === before) empty.push(input);
  }
  return { runs, empty };
}

function walk(dir: string, runs: string[]): void {
  const manifest = join(dir, 'run.json');
  if (exists(manifest)) {
    runs.push(manifest);
    return;
  }
  const subdirs: string[] = [];
  let handle;
  try {
    handle = opendirSync(dir);
  } catch {
    return;
  }
  try {
    for (let entry = handle.readSync(); entry !== null; entry = handle.readSync()) {
      if (entry.isDirectory()) subdirs.push(entry.name);
    }
  } finally {
    handle.closeSync();
  }
  subdirs.sort();
  for (const name of subdirs) walk(join(dir, name), runs);
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Any entry, a dangling symlink included: a run.json that is broken is still a run to report. */
function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
