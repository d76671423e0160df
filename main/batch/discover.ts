import { lstatSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { errnoCode } from '../../formats/codes/error.ts';

export interface Discovered {
  /** Paths to validate: a run.json, or an input given as such (absent paths included). */
  readonly runs: string[];
  /** Directories given as input that hold no run.json anywhere below them. */
  readonly empty: string[];
  /** Directories that could not be searched, and names that cannot be told as text. */
  readonly unreachable: { readonly path: string; readonly message: string }[];
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Expands the inputs to run.json paths. A directory holding run.json is one run and is
 * not searched further (runs keep their own subdirectories); any other directory is
 * searched recursively, in name order, without following symlinked directories. Nothing
 * is skipped silently: a directory that cannot be read, or a subdirectory whose name is
 * not UTF-8 (it cannot be named in output or handed to a worker as text), is reported.
 */
export function discoverRuns(inputs: readonly string[]): Discovered {
  const found: Discovered = { runs: [], empty: [], unreachable: [] };
  for (const input of inputs) {
    if (!isDirectory(input)) {
      found.runs.push(input);
      continue;
    }
    const before = found.runs.length + found.unreachable.length;
    walk(input, found);
    if (found.runs.length + found.unreachable.length === before) found.empty.push(input);
  }
  return found;
}

function walk(dir: string, found: Discovered): void {
  const manifest = join(dir, 'run.json');
  if (exists(manifest)) {
    found.runs.push(manifest);
    return;
  }
  const subdirs: string[] = [];
  try {
    // Names as bytes: decoded here, strictly, instead of with U+FFFD for what is not UTF-8.
    for (const entry of readdirSync(dir, { withFileTypes: true, encoding: 'buffer' })) {
      if (!entry.isDirectory()) continue;
      const raw = entry.name;
      let name: string;
      try {
        name = UTF8.decode(raw);
      } catch {
        found.unreachable.push({ path: join(dir, raw.toString('latin1')), message: `directory name is not valid UTF-8 (bytes ${raw.toString('hex')}) in ${dir}` });
        continue;
      }
      subdirs.push(name);
    }
  } catch (error) {
    found.unreachable.push({ path: dir, message: `directory ${dir} cannot be read (${errnoCode(error) ?? 'error'})` });
    return;
  }
  subdirs.sort();
  for (const name of subdirs) walk(join(dir, name), found);
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
