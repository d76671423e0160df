import { EXIT } from '../../formats/codes/codes.ts';
import { LanewardError } from '../../formats/codes/error.ts';
import { oneLine } from '../../formats/text/one-line.ts';
import { NO_RUN, START_PHASE, TRAIL_COLUMNS } from '../../formats/trail/tsv.ts';
import { appendTrail, startTrail, type TrailOutcome } from '../trail/trail-file.ts';
import { usage } from './args.ts';
import { command, group } from './command.ts';

export const TRAIL_HELP = `usage: laneward trail <start|append> FILE ... [--json]

  start FILE RUN                                          join the trail as run RUN
  append FILE PHASE DECISION WHY EVIDENCE RESULT [--run RUN]   one decision row

The trail is a tab-separated file (columns: ${TRAIL_COLUMNS.join(', ')}): a header line
written once, then one line per row, the time stamped in UTC. Every cell is flattened to
one line (control characters become \\n, \\t, \\uXXXX; an empty cell is -) and a cell that
starts like a formula (= + - @, their full-width forms, an apostrophe, or a leading tab or
CR, also after leading spaces) gets a leading apostrophe, so a spreadsheet shows it as
text. Put -- before cells that start with -. Rows are appended under FILE.lock in one
write each, so concurrent writers lose no row and tear no line.
Exit status: 0 ok, 2 usage, 3 refused (DECISION_TRAIL_START_REQUIRED, TRAIL_UNREADABLE),
1 other failures. Render in a terminal: column -s$'\\t' -t FILE`;

export const START_HELP = `usage: laneward trail start FILE RUN [--json]

Appends a start row (phase start, decision join) naming the earlier rows (FILE:2-<n>) and
the runs that wrote them, then prints TRAIL: start run=<run> row=<n>. When the newest
start row already names RUN nothing is written and it prints TRAIL: start run=<run>
row=<n> already (exit 0). --json prints {started, already, run, row, file, at}.`;

export const APPEND_HELP = `usage: laneward trail append FILE PHASE DECISION WHY EVIDENCE RESULT [--run RUN] [--json]

Appends one row and prints TRAIL: appended row=<n> file=<path>. With --run RUN the row is
written only while the newest start row names RUN; otherwise nothing is written and the
command exits 3 with DECISION_TRAIL_START_REQUIRED. Without --run the run cell is - and
the row is always appended. PHASE may not be start (trail start writes those rows).
--json prints {appended, row, file, at, run}.`;

const CELL_MAX_CHARS = 64 * 1024;

const start = command({
  name: 'start',
  help: START_HELP,
  options: { json: { type: 'boolean' } },
  run: ({ values, positionals }, io) => {
    if (positionals.length !== 2) throw usage(`expected FILE RUN, got ${positionals.length} argument(s)`);
    const [file, run] = positionals as [string, string];
    checkFile(file);
    checkRun(run);
    const outcome = startTrail(file, run, new Date().toISOString());
    if (outcome.kind !== 'started' && outcome.kind !== 'already') throw unexpected(outcome);
    const already = outcome.kind === 'already';
    if (values.json) {
      io.out(JSON.stringify({ started: !already, already, run, row: outcome.row, file, at: already ? null : outcome.at }));
    } else {
      io.out(`TRAIL: start run=${oneLine(run)} row=${outcome.row}${already ? ' already' : ''}`);
    }
    return EXIT.ok;
  },
});

const append = command({
  name: 'append',
  help: APPEND_HELP,
  options: { json: { type: 'boolean' }, run: { type: 'string' } },
  run: ({ values, positionals }, io) => {
    if (positionals.length !== 6) {
      throw usage(`expected FILE PHASE DECISION WHY EVIDENCE RESULT, got ${positionals.length} argument(s) (put -- before cells that start with -)`);
    }
    const [file, phase, decision, why, evidence, result] = positionals as [string, string, string, string, string, string];
    checkFile(file);
    if (values.run !== undefined) checkRun(values.run);
    if (phase === START_PHASE) throw usage(`PHASE may not be ${START_PHASE}: laneward trail start writes start rows`);
    if (phase.trim() === '') throw usage('PHASE is empty');
    for (const [name, cell] of [['PHASE', phase], ['DECISION', decision], ['WHY', why], ['EVIDENCE', evidence], ['RESULT', result]] as const) {
      if (cell.length > CELL_MAX_CHARS) throw usage(`${name} is over ${CELL_MAX_CHARS} characters`);
    }
    const outcome = appendTrail(file, { phase, decision, why, evidence, result }, values.run, new Date().toISOString());
    if (outcome.kind === 'refused') {
      const newest = outcome.newest;
      const detail =
        newest === undefined
          ? `the trail has no start row; run ${JSON.stringify(values.run)} has not started`
          : `the newest start row (row ${newest.row}) names run ${newest.run}, not ${values.run}`;
      throw new LanewardError('DECISION_TRAIL_START_REQUIRED', detail, { path: file });
    }
    if (outcome.kind !== 'appended') throw unexpected(outcome);
    if (values.json) io.out(JSON.stringify({ appended: true, row: outcome.row, file, at: outcome.at, run: values.run ?? null }));
    else io.out(`TRAIL: appended row=${outcome.row} file=${oneLine(file)}`);
    return EXIT.ok;
  },
});

/**
 * `laneward trail start|append`. As it always has, the trail takes --help and -h but not
 * `help`; with --json an error is one JSON object on stdout; refusals exit 3 (the table).
 */
export const TRAIL = group({
  name: 'trail',
  help: TRAIL_HELP,
  commands: [start, append],
  helpWords: ['--help', '-h'],
  unknownNoun: 'trail command',
  failure: { context: (sub) => `laneward trail${sub === undefined ? '' : ` ${sub}`}`, json: true },
});

function checkFile(file: string): void {
  if (file === '') throw usage('FILE is empty');
}

function checkRun(run: string): void {
  if (run.trim() === '' || run === NO_RUN) throw usage(`RUN must name a run, got ${JSON.stringify(run)}`);
  if (run.length > CELL_MAX_CHARS) throw usage(`RUN is over ${CELL_MAX_CHARS} characters`);
}

function unexpected(outcome: TrailOutcome): LanewardError {
  return new LanewardError('INTERNAL', `unexpected trail outcome ${outcome.kind}`);
}
