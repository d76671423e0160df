import { parseArgs } from 'node:util';
import { benchCrew } from './crew.ts';
import { benchLease } from './lease.ts';
import { benchRuns, runsWorker } from './runs.ts';
import { benchValidate } from './validate.ts';

const SUITES = ['validate', 'lease', 'runs', 'crew'] as const;

// A worker process of the runs suite (started by the suite itself, never by hand).
if (process.argv[2] === 'runs-worker') {
  await runsWorker(process.argv.slice(3));
  process.exit(0);
}

const { values, positionals } = parseArgs({
  args: process.argv.slice(2),
  allowPositionals: true,
  options: {
    runs: { type: 'string', default: '1000' },
    'run-kb': { type: 'string', default: '300' },
    'big-mb': { type: 'string', default: '1024' },
    'e2e-runs': { type: 'string', default: '300' },
    'e2e-run-kb': { type: 'string', default: '190' },
    'e2e-samples': { type: 'string', default: '7' },
    only: { type: 'string' },
    samples: { type: 'string', default: '40' },
    fleet: { type: 'string', default: '200' },
    'plan-runs': { type: 'string', default: '100' },
    procs: { type: 'string', default: '4' },
    findings: { type: 'string', default: '5000' },
    'crew-lanes': { type: 'string', default: '200' },
  },
});

const chosen = positionals.length === 0 ? [...SUITES] : positionals;
for (const suite of chosen) {
  if (!(SUITES as readonly string[]).includes(suite)) {
    process.stderr.write(`bench: unknown suite ${suite}; expected one of ${SUITES.join(', ')}\n`);
    process.exit(2);
  }
}
process.stdout.write(`laneward bench (node ${process.version}, ${new Date().toISOString()}); ratios are against baselines measured in this run\n`);
for (const suite of chosen) {
  process.stdout.write(`\n== ${suite}\n`);
  if (suite === 'validate') {
    await benchValidate({
      runs: Number(values.runs),
      runBytes: Number(values['run-kb']) * 1000,
      bigMb: Number(values['big-mb']),
      e2eRuns: Number(values['e2e-runs']),
      e2eRunBytes: Number(values['e2e-run-kb']) * 1000,
      e2eSamples: Number(values['e2e-samples']),
      only: values.only,
    });
  } else if (suite === 'lease') {
    await benchLease({ samples: Number(values.samples), fleet: Number(values.fleet) });
  } else if (suite === 'runs') {
    await benchRuns({ runs: Number(values['plan-runs']), procs: Number(values.procs), findings: Number(values.findings) });
  } else if (suite === 'crew') {
    await benchCrew({ lanes: Number(values['crew-lanes']), samples: 20 });
  }
}
