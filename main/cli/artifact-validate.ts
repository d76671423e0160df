import { lstatSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { EXIT } from '../../formats/codes/codes.ts';
import { oneLine } from '../../formats/text/one-line.ts';
import { jsonText } from '../../formats/text/json-text.ts';
import { isSchemaName, SCHEMAS } from '../../formats/schemas/index.ts';
import { reportObject, type RunReport } from '../../workers/validate/report.ts';
import { validateFile } from '../../workers/validate/validate-file.ts';
import { validateRun } from '../../workers/validate/validate-run.ts';
import { intOption, usage } from './args.ts';
import { command } from './command.ts';
import type { Io } from './io.ts';
import { printIssueLines } from './issue-lines.ts';
import { refuseEmptyPaths } from './paths.ts';

export const CONTEXT = 'laneward artifact validate';

export const VALIDATE_HELP = `usage:
  laneward artifact validate <run.json|dir>... [--json] [--jobs N]
  laneward artifact validate <file> --as <schema> [--run <id>] [--json]

One run.json, or a directory holding one, is validated in this process: one line per
error on stderr, then ARTIFACT_VALID: run=<id> status=<status> (exit 0) or
ARTIFACT_INVALID: <n> error(s) (exit 1) on stdout.

Several paths, or a directory without run.json (searched recursively), are validated as
a batch across a worker pool: one ARTIFACT_INVALID: run=<id> path=<run.json> errors=<n>
codes=<CODE,...> line per invalid run, then ARTIFACT_SUMMARY: runs=<n> valid=<n>
invalid=<n> <CODE>=<errors>... A terminal gets a progress bar on stderr. Exit 0 only
when every run is valid.

--as checks one artifact file against a schema (${Object.keys(SCHEMAS).join(', ')});
--run binds JSONL row ids to a run id.

options:
  --json      print JSON objects instead of lines (batch: one per run, then a summary)
  --jobs N    threads for a batch, the coordinator included (default: the machine's parallelism)
  --as NAME   validate a single file against the named schema
  --run ID    with --as: the run id rows must be bound to`;

const OPTIONS = {
  json: { type: 'boolean' },
  jobs: { type: 'string' },
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
