import { constants, existsSync } from 'node:fs';
import { link, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { errnoCode, LanewardError } from '../../formats/codes/error.ts';
import { tryReadBounded } from '../fs/read-bounded.ts';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import { makeDirs } from '../fs/make-dirs.ts';
import { defaultStateRoot, type PlanSettings } from './settings.ts';

export const BINDING_FILE = '.laneward-run';

/** The line in DIR/.laneward-run: which run this directory holds, and in which state root. */
export interface RunBinding {
  readonly run: string;
  readonly root: string;
}

const RUN_ID = /^[a-z0-9][a-z0-9-]{0,127}$/;

/** Reads the binding; undefined when the directory holds none. A damaged one is refused. */
export function readBinding(dir: string): RunBinding | undefined {
  const file = join(dir, BINDING_FILE);
  // laneward writes the binding itself: a link planted at its name is refused, not followed.
  const read = tryReadBounded(file, 8192, { noFollow: true });
  if (!read.ok) {
    if (read.reason === 'absent') return undefined;
    throw new LanewardError('RUN_NOT_INITIALIZED', read.detail, { path: file });
  }
  const line = read.bytes.toString('utf8').replace(/\n$/, '');
  const space = line.indexOf(' ');
  const run = line.slice(0, space);
  const root = line.slice(space + 1);
  if (space < 0 || !RUN_ID.test(run) || root === '' || root.includes('\n')) {
    throw new LanewardError('RUN_NOT_INITIALIZED', `${file} is not a laneward run binding`, { path: file });
  }
  return { run, root };
}

/**
 * Publishes the binding exclusively: written to a temp name, synced and hard-linked into
 * place, so two first `next`s racing on one directory agree on one run id (the loser reads
 * the winner's). Returns the binding that holds. The syncs run on the thread pool: a crew
 * starting many lanes at once does not wait for them one after another.
 */
export async function publishBinding(dir: string, binding: RunBinding): Promise<RunBinding> {
  makeDirs(dir);
  const file = join(dir, BINDING_FILE);
  const temp = `${file}.${process.pid}.${Date.now()}.${++published}.tmp`;
  try {
    const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o644);
    try {
      await handle.writeFile(`${binding.run} ${binding.root}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await link(temp, file);
    } catch (error) {
      if (errnoCode(error) !== 'EEXIST') throw error;
      return readBinding(dir)!;
    }
    const handle2 = await open(dir, 'r');
    try {
      await handle2.sync();
    } finally {
      await handle2.close();
    }
    return binding;
  } finally {
    await rm(temp, { force: true });
  }
}

/**
 * Points an existing binding at another state root (the run's root moved and was named by
 * --state): a new binding file renamed over the old one, synced.
 */
export function repointBinding(dir: string, binding: RunBinding): void {
  writeFileAtomic(join(dir, BINDING_FILE), `${binding.run} ${binding.root}\n`, 0o644, true);
}

let published = 0;

/**
 * Which state root a command uses: --state, then LANEWARD_STATE_ROOT, then the root the
 * run directory's binding names, then .laneward/state under the current directory.
 */
export function stateRootFor(configured: PlanSettings['stateRoot'], binding: RunBinding | undefined, cwd: string): string {
  if (configured !== undefined) return oneLineRoot(configured.path, configured.from);
  if (binding !== undefined) {
    // A root named by a file in the run directory is used, never created.
    if (!existsSync(binding.root)) throw new LanewardError('RUN_NOT_INITIALIZED', `the state root ${binding.root} named in ${BINDING_FILE} does not exist; pass --state <root>`, { path: binding.root });
    return binding.root;
  }
  return defaultStateRoot(cwd);
}

/** A root is recorded on the one line of .laneward-run: a path with a line break could not be read back. */
function oneLineRoot(root: string, from: string): string {
  if (root.includes('\n')) throw new LanewardError('STATE_UNAVAILABLE', `the state root from ${from} holds a line break, which ${BINDING_FILE} cannot record: ${JSON.stringify(root)}`, { path: root });
  return root;
}
