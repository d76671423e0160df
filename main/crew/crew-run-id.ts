import { randomBytes } from 'node:crypto';
import type { Store } from '../store/store.ts';

/**
 * The id of a crew's run on a state root: minted the first time the crew runs there, kept
 * in its crew-runs record, and read back by every later start on that root, so a crew
 * killed and started again continues its own lanes' branches, while the same crew on
 * another state root (a new run) gets branches of its own. UTC start second and 24 random
 * bits: sortable by start, unique across machines, valid in a git branch name.
 */
export function crewRunId(store: Store, crew: string, now: Date = new Date()): string {
  const kept = store.crewRuns.get(crew)?.runId;
  if (typeof kept === 'string' && RUN_ID.test(kept)) return kept;
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return `${stamp}-${randomBytes(3).toString('hex')}`;
}

/** What {@link crewRunId} mints: `20261202T072958Z-a1b2c3`. */
export const RUN_ID = /^\d{8}T\d{6}Z-[0-9a-f]{6}$/;
