import { BENCH_HELP, parseBenchArgs } from './args.ts';
import { benchConsole, viewersWorker } from './console.ts';
import { benchCrew } from './crew.ts';
import { benchCrewQueue } from './crew-queue.ts';
import { benchLease } from './lease.ts';
import { benchRuns, runsWorker } from './runs.ts';
import { benchValidate } from './validate.ts';

// A worker process of the runs suite (started by the suite itself, never by hand).
if (process.argv[2] === 'runs-worker') {
  await runsWorker(process.argv.slice(3));
  process.exit(0);
}
// The viewers of the console suite, in a process of their own.
if (process.argv[2] === 'viewers-worker') {
  await viewersWorker(process.argv.slice(3));
  process.exit(0);
}

const args = parseBenchArgs(process.argv.slice(2));
if (args.kind === 'help') {
  process.stdout.write(`${BENCH_HELP}\n`);
  process.exit(0);
}
if (args.kind === 'usage') {
  process.stderr.write(`bench: ${args.message} (see npm run bench -- --help)\n`);
  process.exit(2);
}
const { suites: chosen, numbers: n } = args;
process.stdout.write(`laneward bench (node ${process.version}, ${new Date().toISOString()}); ratios are against baselines measured in this run\n`);
for (const suite of chosen) {
  process.stdout.write(`\n== ${suite}\n`);
  if (suite === 'validate') {
    await benchValidate({
      runs: n.runs,
      runBytes: n['run-kb'] * 1000,
      bigMb: n['big-mb'],
      e2eRuns: n['e2e-runs'],
      e2eRunBytes: n['e2e-run-kb'] * 1000,
      e2eSamples: n['e2e-samples'],
      startSamples: n['start-samples'],
      only: args.only,
    });
  } else if (suite === 'lease') {
    await benchLease({ samples: n.samples, fleet: n.fleet });
  } else if (suite === 'runs') {
    await benchRuns({ runs: n['plan-runs'], procs: n.procs, findings: n.findings });
  } else if (suite === 'crew' && args.queue) {
    await benchCrewQueue({ lanes: n['queue-lanes'] });
  } else if (suite === 'crew') {
    await benchCrew({ lanes: n['crew-lanes'], samples: 20 });
  } else if (suite === 'console') {
    await benchConsole({ lanes: n['console-lanes'], viewers: n.viewers, windowS: n['window-s'] });
  }
}
