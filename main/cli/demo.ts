import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { EXIT } from '../../formats/codes/codes.ts';
import { runBatch } from '../batch/run-batch.ts';
import { brokenRuns, generateArchive } from '../demo/sample-archive.ts';
import { intOption, usage } from './args.ts';
import { command, group } from './command.ts';
import { CREW_DEMO } from './demo-crew.ts';

export const ARCHIVE_HELP = `usage: laneward demo archive [--dir DIR] [--runs N] [--jobs N] [--json]

Generates a sample archive of run directories once
(default .laneward/sample-archive, 400 runs of about 60 KB, every 20th one broken by a
catalogue variant), then batch-validates it across the worker pool with a progress bar.
Prints DEMO: lines around the batch output; exit 0 when the validator flags exactly the
runs that were broken on purpose.`;

/** `laneward demo archive`: generate the sample archive once, batch-validate it, check the count. */
const ARCHIVE = command({
  name: 'archive',
  help: ARCHIVE_HELP,
  options: { dir: { type: 'string' }, runs: { type: 'string' }, jobs: { type: 'string' }, json: { type: 'boolean' } },
  positionals: false,
  run: async ({ values }, io) => {
    const dir = values.dir ?? join('.laneward', 'sample-archive');
    const runs = intOption('runs', values.runs, 1, 1_000_000) ?? 400;
    const jobs = intOption('jobs', values.jobs, 1, 256);
    const broken = brokenRuns(runs);
    if (existsSync(join(dir, '.complete'))) {
      io.err(`DEMO: archive ${dir} already generated; validating it`);
    } else if (existsSync(dir) && readdirSync(dir).length > 0) {
      // Never clear a directory the demo did not make.
      throw usage(`${dir} exists and is not a sample archive; name an empty or new --dir`);
    } else {
      io.err(`DEMO: generating ${runs} run directories in ${dir}`);
      generateArchive(dir, runs);
    }
    const { summary } = await runBatch([dir], { json: values.json === true, jobs }, io);
    const expected = summary.runs === runs && summary.invalid === broken;
    io.err(`DEMO: ${summary.runs} runs, ${summary.invalid} invalid, ${broken} broken on purpose: ${expected ? 'as expected' : 'UNEXPECTED'}`);
    return expected ? EXIT.ok : EXIT.fail;
  },
});

export const DEMO_HELP = `usage: laneward demo crew|archive [options] [--json]

  crew     the main job (npm start): a crew of 50 lanes with fixture reviewers, observer and
           agent on the embedded store, every lane exported and validated (see demo crew --help)
  archive  generate a sample archive of run directories once and batch-validate it`;

export const DEMO = group({ name: 'demo', help: DEMO_HELP, commands: [CREW_DEMO, ARCHIVE] });
