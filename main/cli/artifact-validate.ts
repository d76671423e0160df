import { lstatSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { EXIT } from '../../formats/codes/codes.ts';
import { oneLine } from '../../formats/text/one-line.ts';
import { jsonText } from '../../formats/text/json-text.ts';
import { isSchemaName, SCHEMAS } from '../../formats/schemas/index.ts';
import { reportObject, type RunReport } from '../../workers/validate/report.ts';
import { validateFile } from '../../workers/validate/validate-file.ts';
import { validateRun } from '../../workers/validate/validate-run.ts';
import { readPrivateKey } from '../actions/keys.ts';
import { queueTarget } from '../queue/connection.ts';
import { MAX_JOB_RUNS } from '../queue/runs-job.ts';
import { intOption, usage } from './args.ts';
import { command } from './command.ts';
import type { Io } from './io.ts';
import { printIssueLines } from './issue-lines.ts';
import { refuseEmptyPaths } from './paths.ts';

export const CONTEXT = 'laneward artifact validate';

/** Runs per queued job when --runs-per-job is not given: a job is worth its round trip. */
const RUNS_PER_JOB = 200;

export const VALIDATE_HELP = `usage:
  laneward artifact validate <run.json|dir>... [--json] [--jobs N]
  laneward artifact validate <run.json|dir>... --queue redis://HOST:PORT --key KEY [--runs-per-job N] [--json]
  laneward artifact validate <file> --as <schema> [--run <id>] [--json]

One run.json, or a directory holding one, is validated in this process: one line per
error on stderr, then ARTIFACT_VALID: run=<id> status=<status> (exit 0) or
ARTIFACT_INVALID: <n> error(s) (exit 1) on stdout.

Several paths, or a directory without run.json (searched recursively), are validated as
a batch across a worker pool: one ARTIFACT_INVALID: run=<id> path=<run.json> errors=<n>
codes=<CODE,...> line per invalid run, then ARTIFACT_SUMMARY: runs=<n> valid=<n>
invalid=<n> <CODE>=<errors>... A terminal gets a progress bar on stderr. Exit 0 only
when every run is valid.

With --queue the inputs are always a batch, validated by the laneward artifact worker
processes draining that Redis, on this machine or others: the runs are found here, queued
as jobs of --runs-per-job runs signed with KEY (an Ed25519 private key, laneward actions
keygen), and reported here as the jobs come back, in the same lines and the same summary
as above. A Redis that cannot be reached, or is lost, is QUEUE_UNAVAILABLE (exit 1); a
job a worker refused fails the batch with its code (JOB_INVALID, exit 3). Run again after
a lost Redis, the same command collects the jobs still queued instead of queueing them twice.

--as checks one artifact file against a schema (${Object.keys(SCHEMAS).join(', ')});
--run binds JSONL row ids to a run id.

options:
  --json              print JSON objects instead of lines (batch: one per run, then a summary)
  --jobs N            threads for a batch, the coordinator included (default: the machine's parallelism)
  --queue URL         validate the batch on the workers of this Redis: redis://[[user]:password@]HOST:PORT[/DB]
  --key FILE          with --queue: the Ed25519 private key the jobs are signed with
  --runs-per-job N    with --queue: runs per job, 1 to ${MAX_JOB_RUNS} (default ${RUNS_PER_JOB})
  --as NAME           validate a single file against the named schema
  --run ID            with --as: the run id rows must be bound to`;

const OPTIONS = {
  json: { type: 'boolean' },
  jobs: { type: 'string' },
  queue: { type: 'string' },
  key: { type: 'string' },
  'runs-per-job': { type: 'string' },
  as: { type: 'string' },
  run: { type: 'string' },
} as const;

export const VALIDATE = command({
  name: 'validate',
  help: VALIDATE_HELP,
  options: OPTIONS,
  run: async ({ values, positionals }, io) => {
    if (positionals.length === 0) throw usage('expected at least one <run.json|dir> to validate');
    refuseEmptyPaths(positionals);
    if (values.queue === undefined) {
      if (values.key !== undefined || values['runs-per-job'] !== undefined) throw usage('--key and --runs-per-job go with --queue');
    } else {
      if (values.as !== undefined || values.jobs !== undefined) throw usage('--queue validates a batch on the workers: it takes neither --as nor --jobs');
      return validateOnQueue(positionals, values.queue, values.key, values['runs-per-job'], values.json === true, io);
    }
    if (values.as !== undefined) return validateAs(positionals, values.as, values.run, values.json === true, io);
    if (values.run !== undefined) throw usage('--run goes with --as');
    const jobs = intOption('jobs', values.jobs, 1, 256);
    const json = values.json === true;

    if (positionals.length === 1 && isSingleRun(positionals[0]!)) {
      const report = validateRun(positionals[0]!);
      printSingle(report, json, io);
      return report.valid ? EXIT.ok : EXIT.fail;
    }
    // The pool, and everything it loads, is needed only here.
    const { runBatch } = await import('../batch/run-batch.ts');
    return (await runBatch(positionals, { json, jobs }, io)).code;
  },
});

/** `--queue`: the options checked before anything connects, then the batch run by the queue's workers. */
async function validateOnQueue(inputs: readonly string[], queue: string, key: string | undefined, perJob: string | undefined, json: boolean, io: Io): Promise<number> {
  const target = queueTarget(queue);
  if (key === undefined) throw usage('--queue needs --key, the private key the jobs are signed with');
  const runsPerJob = intOption('runs-per-job', perJob, 1, MAX_JOB_RUNS) ?? RUNS_PER_JOB;
  const privateKey = readPrivateKey(key);
  // The queue client, and everything it loads, is needed only here.
  const { runQueueBatch } = await import('../queue/runs-queue.ts');
  return (await runQueueBatch(inputs, { json, target, key: privateKey, runsPerJob }, io)).code;
}

/** A path named run.json, a file, an absent path, or a directory holding run.json is one run; other directories are searched. */
function isSingleRun(target: string): boolean {
  if (basename(target) === 'run.json') return true;
  try {
    if (!statSync(target).isDirectory()) return true;
  } catch {
    return true;
  }
  try {
    // lstat: a run.json that is a dangling symlink still makes this a run directory.
    lstatSync(join(target, 'run.json'));
    return true;
  } catch {
    return false;
  }
}

export function printSingle(report: RunReport, json: boolean, io: Io): void {
  if (json) {
    io.out(jsonText(reportObject(report)));
    return;
  }
  printIssueLines(io, CONTEXT, report.errors, report.errors_omitted);
  if (report.valid) {
    const attested = report.attested > 0 ? ` attested=${report.attested}` : '';
    io.out(`ARTIFACT_VALID: run=${oneLine(report.run ?? '-')} status=${oneLine(report.status ?? '-')}${attested}`);
  } else {
    io.out(`ARTIFACT_INVALID: ${report.errors.length + report.errors_omitted} error(s)`);
  }
}

function validateAs(paths: readonly string[], schema: string, runId: string | undefined, json: boolean, io: Io): number {
  if (paths.length !== 1) throw usage('--as validates exactly one file');
  if (!isSchemaName(schema)) throw usage(`unknown schema ${JSON.stringify(schema)}; expected one of ${Object.keys(SCHEMAS).join(', ')}`);
  const report = validateFile(paths[0]!, schema, runId);
  if (json) {
    io.out(jsonText(report));
  } else {
    const omitted = report.errors_omitted ?? 0;
    printIssueLines(io, CONTEXT, report.errors, omitted);
    io.out(report.valid ? `ARTIFACT_VALID: schema=${schema} rows=${report.rows}` : `ARTIFACT_INVALID: ${report.errors.length + omitted} error(s)`);
  }
  return report.valid ? EXIT.ok : EXIT.fail;
}
