import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { isLanewardError, LanewardError, oneLineMessage } from '../../formats/codes/error.ts';
import { openStore, type Store } from '../store/store.ts';

/**
 * Opens the state root of a plan command. `write` makes the root (the store's mkdir -p
 * always ends: a root under /proc is STATE_UNAVAILABLE, never a spin). `read` (plan
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
  return open(root, false);
}

function open(root: string, readOnly: boolean): Store {
  try {
    return openStore(root, readOnly ? { readOnly } : {});
  } catch (error) {
    const message = oneLineMessage(error);
    throw new LanewardError(isLanewardError(error) ? error.code : 'STATE_UNAVAILABLE', message, { path: root, cause: error });
  }
}
