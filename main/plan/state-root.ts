import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { isLanewardError, LanewardError, toError } from '../../formats/error.ts';
import { makeDirs } from '../fs/make-dirs.ts';
import { openStore, type Store } from '../store/store.ts';

/**
 * Opens the state root of a plan command. `write` makes the root first with a mkdir -p
 * that always ends (a root under /proc is STATE_UNAVAILABLE, never a spin). `read` (plan
 * status) makes nothing: a root that does not exist holds no run, and a root on a
 * read-only file system is opened read-only. A cause's own lines (LMDB's) are collapsed
 * into the one error line.
 */
export function openStateRoot(root: string, mode: 'write' | 'read' = 'write'): Store {
  if (mode === 'read') {
    if (!existsSync(join(root, 'data.mdb'))) throw new LanewardError('RUN_NOT_INITIALIZED', `the state root ${root} holds no runs`, { path: root });
    try {
      return open(root, false);
    } catch (error) {
      // Writable opens set up locks; a read-only root is read without them.
      try {
        return open(root, true);
      } catch {
        throw error;
      }
    }
  }
  makeDirs(root, { code: 'STATE_UNAVAILABLE' });
  return open(root, false);
}

function open(root: string, readOnly: boolean): Store {
  try {
    return openStore(root, readOnly ? { readOnly } : {});
  } catch (error) {
    const message = collapse(toError(error).message);
    throw new LanewardError(isLanewardError(error) ? error.code : 'STATE_UNAVAILABLE', message, { path: root, cause: error });
  }
}

/** A message of several lines (a native library's) as one: each line break and its indentation one space. */
export function collapse(message: string): string {
  return message.replace(/\s*[\n\r\u000b\u000c\u0085\u2028\u2029]+\s*/g, ' ').trim();
}
