import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EXIT } from '../../formats/codes.ts';
import { CATALOGUE } from '../../fixtures/catalogue.ts';
import { generateRun } from '../../fixtures/generate-run.ts';
import { runBatch } from '../batch/run-batch.ts';
import { intOption, parseCommand, usage } from './args.ts';
import type { Io } from './io.ts';

export const DEMO_HELP = `usage: laneward demo [--dir DIR] [--runs N] [--jobs N] [--json]

The main job until crews land: generates a sample archive of run directories once
(default .laneward/sample-archive, 400 runs of about 60 KB, every 20th one broken by a
catalogue variant), then batch-validates it across the worker pool with a progress bar.
Prints DEMO: lines around the batch output; exit 0 when the validator flags exactly the
runs that were broken on purpose.`;

const BROKEN_EVERY = 20;
// A variant that deletes run.json leaves nothing to discover; the demo plants the others.
const PLANTED = CATALOGUE.filter((variant) => variant.name !== 'run-json-absent');

export async function demoCommand(args: readonly string[], io: Io): Promise<number> {
  const { values } = parseCommand(
    args,
    { dir: { type: 'string' }, runs: { type: 'string' }, jobs: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    false,
  );
  if (values.help) {
    io.out(DEMO_HELP);
    return EXIT.ok;
  }
  const dir = values.dir ?? join('.laneward', 'sample-archive');
  const runs = intOption('runs', values.runs, 1, 1_000_000) ?? 400;
  const jobs = intOption('jobs', values.jobs, 1, 256);
  const broken = Math.floor((runs - 1) / BROKEN_EVERY) + 1;
  if (existsSync(join(dir, '.complete'))) {
    io.err(`DEMO: archive ${dir} already generated; validating it`);
  } else if (existsSync(dir) && readdirSync(dir).length > 0) {
    // Never clear a directory the demo did not make.
    throw usage(`${dir} exists and is not a sample archive; name an empty or new --dir`);
  } else {
    generateArchive(dir, runs, io);
  }
  const { summary } = await runBatch([dir], { json: values.json === true, jobs }, io);
  const expected = summary.runs === runs && summary.invalid === broken;
  io.err(`DEMO: ${summary.runs} runs, ${summary.invalid} invalid, ${broken} broken on purpose: ${expected ? 'as expected' : 'UNEXPECTED'}`);
  return expected ? EXIT.ok : EXIT.fail;
}

/** Writes the archive into a temp directory and renames it into place, so it is whole or absent. */
function generateArchive(dir: string, runs: number, io: Io): void {
  const staging = `${dir}.partial-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  io.err(`DEMO: generating ${runs} run directories in ${dir}`);
  const width = String(runs).length;
  for (let i = 0; i < runs; i++) {
    const runDir = join(staging, `lane-${String(i % 16).padStart(2, '0')}`, `run-${String(i).padStart(width, '0')}`);
    generateRun(runDir, { runId: 'run1', seed: i + 1, targetBytes: 60_000 });
    if (i % BROKEN_EVERY === 0) PLANTED[(i / BROKEN_EVERY) % PLANTED.length]!.apply(runDir);
  }
  writeFileSync(join(staging, '.complete'), `${runs}\n`);
  rmSync(dir, { recursive: true, force: true }); // empty or absent: checked by the caller
  renameSync(staging, dir);
}
