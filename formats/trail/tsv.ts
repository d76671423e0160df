/**
 * The decision trail: a tab-separated file a person reads (`column -s$'\t' -t`), one
 * header line, then one line per row. Pure text rules only; the file I/O is in
 * main/trail/.
 */

import { oneLine } from '../text/one-line.ts';

/** The columns, in order. `run` is `-` for an append that named no run. */
export const TRAIL_COLUMNS = ['at', 'run', 'phase', 'decision', 'why', 'evidence', 'result'] as const;

export const TRAIL_HEADER = `${TRAIL_COLUMNS.join('\t')}\n`;

/** The phase of the rows `trail start` writes; `append` may not forge one. */
export const START_PHASE = 'start';

/** The run cell of a row appended without `--run`. */
export const NO_RUN = '-';

export interface TrailRow {
  readonly at: string;
  readonly run: string;
  readonly phase: string;
  readonly decision: string;
  readonly why: string;
  readonly evidence: string;
  readonly result: string;
}


// What a spreadsheet may take as the start of a formula: = + - @ and their full-width
// and small-form twins (some spreadsheets fold them to ASCII), the minus sign, and the
// apostrophe itself, so that a quoted cell can always be told from one that began with
// an apostrophe.
const FORMULA_START = /^[=+\-@\uff1d\uff0b\uff0d\uff20\ufe66\ufe62\ufe63\ufe6b\u2212']/u;
// Leading whitespace a spreadsheet may skip before it looks for a formula.
const LEADING_SPACE = /^[\s\u0000-\u001f\u007f-\u009f\u200b\ufeff]+/u;

/**
 * One cell as written: control, format and separator characters replaced by visible
 * escapes as every printed line has them (`\n`, `\t`, `\u0007`, `\u200b`: so no cell can
 * add a row or a column in any reader, nor read differently from what it holds), an
 * empty value as `-`, then a leading apostrophe when the value (after any leading
 * whitespace) starts like a formula, or starts with a tab or carriage return, so a spreadsheet
 * shows it as text and never runs it.
 */
export function trailCell(value: string): string {
  // An empty cell would vanish under `column -t`, which folds adjacent tabs.
  if (value === '') return NO_RUN;
  const flat = oneLine(value);
  const trimmed = value.replace(LEADING_SPACE, '');
  // A lone `-` is the trail's own empty marker, and no spreadsheet reads it as a formula.
  const risky = value !== NO_RUN && (value.startsWith('\t') || value.startsWith('\r') || FORMULA_START.test(trimmed));
  return risky ? `'${flat}` : flat;
}

/** One complete line of the trail, newline included, every cell through {@link trailCell}. */
export function renderTrailRow(row: TrailRow): string {
  return `${TRAIL_COLUMNS.map((column) => trailCell(row[column])).join('\t')}\n`;
}

export interface ParsedTrailLine {
  /** 1-based row number: the header is row 0, so row n is line n + 1. */
  readonly row: number;
  readonly cells: readonly string[];
}

export interface ParsedTrail {
  /** The first line as it is, or undefined for an empty file. */
  readonly header: string | undefined;
  readonly rows: readonly ParsedTrailLine[];
  /** True when the file does not end in a newline (a writer died mid-line). */
  readonly tornTail: boolean;
}

/** Splits the trail's text back into its header and rows; cells stay as written. */
export function parseTrail(text: string): ParsedTrail {
  if (text === '') return { header: undefined, rows: [], tornTail: false };
  const lines = text.split('\n');
  const tornTail = lines[lines.length - 1] !== '';
  if (!tornTail) lines.pop();
  const [header, ...rest] = lines;
  return { header, rows: rest.map((line, index) => ({ row: index + 1, cells: line.split('\t') })), tornTail };
}

const RUN = TRAIL_COLUMNS.indexOf('run');
const PHASE = TRAIL_COLUMNS.indexOf('phase');

/** The newest row written by `trail start`, with the run cell it names. */
export function newestStart(trail: ParsedTrail): { row: number; run: string } | undefined {
  for (let index = trail.rows.length - 1; index >= 0; index--) {
    const line = trail.rows[index]!;
    if (line.cells.length === TRAIL_COLUMNS.length && line.cells[PHASE] === START_PHASE) {
      return { row: line.row, run: line.cells[RUN]! };
    }
  }
  return undefined;
}

/** Whether the newest start row names `run` (compared as written, after escaping). */
export function startNames(trail: ParsedTrail, run: string): boolean {
  return newestStart(trail)?.run === trailCell(run);
}

/**
 * The cells of a start row for `run` joining a trail: it names the earlier rows (by
 * line, as `file:first-last`) and the runs that wrote them, in order of first appearance.
 */
export function startRow(trail: ParsedTrail, run: string, fileName: string, at: string): TrailRow {
  const runs: string[] = [];
  for (const line of trail.rows) {
    const cell = line.cells[RUN];
    if (cell !== undefined && cell !== NO_RUN && cell !== '' && !runs.includes(cell)) runs.push(cell);
  }
  const count = trail.rows.length;
  const why =
    count === 0
      ? 'first rows of this trail'
      : `follows rows 1-${count}${runs.length === 0 ? '' : ` (runs: ${runs.join(', ')})`}`;
  return {
    at,
    run,
    phase: START_PHASE,
    decision: 'join',
    why,
    evidence: count === 0 ? NO_RUN : `${fileName}:2-${count + 1}`,
    result: 'started',
  };
}
