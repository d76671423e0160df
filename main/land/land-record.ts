import { join } from 'node:path';
import type { LaneLanded } from '../../formats/crew/land-train.ts';
import type { LaneLand } from '../../formats/console/snapshot.ts';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import { makeDirs } from '../fs/make-dirs.ts';
import { tryReadBounded } from '../fs/read-bounded.ts';

/** The train's own directory in a lane's run directory: its pregate record and this one. */
export const LAND_DIR = 'land';
/** How the lane's last train ended for it, in `<run dir>/land/`. */
export const LAND_RECORD = 'land.json';

/**
 * Writes `<run dir>/land/land.json`, atomically: how the lane's last train ended for it
 * (status, code, from, to, the base), for the operator, the console and the lane's way
 * back to its agent.
 */
export function recordLanded(runDir: string, landed: LaneLanded, base: string): void {
  const dir = join(runDir, LAND_DIR);
  makeDirs(dir);
  writeFileAtomic(join(dir, LAND_RECORD), `${JSON.stringify({ ...landed, base, at: new Date().toISOString() }, null, 2)}\n`, 0o644, true);
}

/** The lane's last train outcome as the console shows it; undefined when no train took it (or the record does not read). */
export function readLandRecord(runDir: string): LaneLand | undefined {
  const read = tryReadBounded(join(runDir, LAND_DIR, LAND_RECORD), 64 * 1024);
  if (!read.ok) return undefined;
  try {
    const r = JSON.parse(read.bytes.toString('utf8')) as { status?: unknown; code?: unknown; to?: unknown; at?: unknown };
    if (typeof r.status !== 'string' || typeof r.at !== 'string') return undefined;
    return { status: r.status, code: typeof r.code === 'string' ? r.code : null, to: typeof r.to === 'string' ? r.to : null, at: r.at };
  } catch {
    return undefined;
  }
}
