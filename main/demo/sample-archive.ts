import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CATALOGUE } from '../../fixtures/catalogue.ts';
import { generateRun } from '../../fixtures/generate-run.ts';
import { makeDirs } from '../fs/make-dirs.ts';

/** Every this-many-th run of the sample archive is broken on purpose. */
export const BROKEN_EVERY = 20;
// A variant that deletes run.json leaves nothing to discover; the demo plants the others.
const PLANTED = CATALOGUE.filter((variant) => variant.name !== 'run-json-absent');

/** How many of `runs` sample runs are broken on purpose. */
export function brokenRuns(runs: number): number {
  return Math.floor((runs - 1) / BROKEN_EVERY) + 1;
}

/**
 * Writes the archive into a temp directory and renames it into place, so it is whole or
 * absent. `dir` must be empty or absent (checked by the caller).
 */
export function generateArchive(dir: string, runs: number): void {
  const staging = `${dir}.partial-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  makeDirs(staging);
  const width = String(runs).length;
  for (let i = 0; i < runs; i++) {
    const runDir = join(staging, `lane-${String(i % 16).padStart(2, '0')}`, `run-${String(i).padStart(width, '0')}`);
    generateRun(runDir, { runId: 'run1', seed: i + 1, targetBytes: 60_000 });
    if (i % BROKEN_EVERY === 0) PLANTED[(i / BROKEN_EVERY) % PLANTED.length]!.apply(runDir);
  }
  writeFileSync(join(staging, '.complete'), `${runs}\n`);
  rmSync(dir, { recursive: true, force: true });
  renameSync(staging, dir);
}
