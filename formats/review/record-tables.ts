import { checkTitle, makeFinding, type ReviewFinding } from './finding.ts';
import { normaliseSeverity, quote, SEVERITY_LIST, type Severity } from './severity.ts';

/** The hand-run shapes a record may take when it has no findings fence. */
export type RecordShape = 'table' | 'list' | 'none';

export type RecordParse =
  | { readonly ok: true; readonly shape: RecordShape; readonly findings: ReviewFinding[] }
  | { readonly ok: false; readonly message: string; readonly line: number | null };

const SHAPE_NAMES: Record<RecordShape, string> = {
  table: 'a findings table',
  list: 'severity-tagged items',
  none: 'a "No findings." line',
};

/**
 * Reads a hand-run record's findings from `lines[start..]`, skipping lines inside code
 * blocks (`inBlock[i] === 1`): every findings table (a header with Severity and Title
 * columns), every severity-tagged item, every `No findings.` line. Exactly one of the three
 * shapes may appear; a mix is refused so no finding is silently lost, and a line that
 * looks like a finding but cannot be read is refused, never skipped. One pass, no
 * recursion: each line is looked at a bounded number of times.
 */
export function parseRecordShapes(lines: readonly string[], start: number, inBlock: Uint8Array): RecordParse {
  const findings: ReviewFinding[] = [];
  const first: Partial<Record<RecordShape, number>> = {};
  const saw = (shape: RecordShape, index: number): void => {
    first[shape] ??= index + 1;
  };
  let i = start;
  while (i < lines.length) {
    const text = lines[i] ?? '';
    if (inBlock[i] === 1 || text.trim() === '') {
      i += 1;
      continue;
    }
    const next = i + 1 < lines.length && inBlock[i + 1] !== 1 ? lines[i + 1] : undefined;
    const header = next === undefined ? null : tableHeader(text, next);
    if (header !== null) {
      const columns = findingColumns(header);
      if (columns !== null) saw('table', i);
      i += 2;
      for (; i < lines.length && inBlock[i] !== 1 && lines[i]?.includes('|') === true && lines[i]?.trim() !== ''; i += 1) {
        if (columns === null) continue;
        const row = tableRow(splitRow(lines[i] ?? ''), columns);
        if ('bad' in row) return { ok: false, message: `table row: ${row.bad}`, line: i + 1 };
        findings.push(row.finding);
      }
      continue;
    }
    if (NO_FINDINGS.test(text.trim())) {
      saw('none', i);
    } else {
      const item = listItem(text);
      if (item !== null) {
        if ('bad' in item) return { ok: false, message: item.bad, line: i + 1 };
        saw('list', i);
        findings.push(item.finding);
      }
    }
    i += 1;
  }
  const shapes = (Object.keys(first) as RecordShape[]).sort((a, b) => (first[a] ?? 0) - (first[b] ?? 0));
  const [shape, second] = shapes;
  if (shape === undefined) {
    return {
      ok: false,
      message: 'no findings fence, findings table (Severity and Title columns), severity-tagged list ("- [High] title") or "No findings." line',
      line: null,
    };
  }
  if (second !== undefined) {
    return {
      ok: false,
      message: `the record mixes ${SHAPE_NAMES[shape]} (line ${first[shape]}) with ${SHAPE_NAMES[second]}; keep one shape`,
      line: first[second] ?? null,
    };
  }
  return { ok: true, shape, findings };
}

const NO_FINDINGS = /^no findings\.?$/i;

// ---- tables ----------------------------------------------------------------------------

interface Columns {
  readonly severity: number;
  readonly title: number;
  readonly file: number;
  readonly line: number;
  readonly fix: number;
  readonly id: number;
}

/** Splits a table row on unescaped pipes; leading and trailing pipes are optional. */
function splitRow(text: string): string[] {
  let body = text.trim();
  if (body.startsWith('|')) body = body.slice(1);
  if (body.endsWith('|') && !body.endsWith('\\|')) body = body.slice(0, -1);
  // Hint: most rows escape no pipe, and a plain split is several times faster.
  if (!body.includes('\\|')) return body.split('|').map((cell) => cell.trim());
  const cells: string[] = [];
  let cell = '';
  for (let k = 0; k < body.length; k += 1) {
    const c = body[k];
    if (c === '\\' && body[k + 1] === '|') {
      cell += '|';
      k += 1;
    } else if (c === '|') {
      cells.push(cell.trim());
      cell = '';
    } else {
      cell += c;
    }
  }
  cells.push(cell.trim());
  return cells;
}

const DELIMITER_CELL = /^:?-+:?$/;

/** The header cells when `text` heads a table whose delimiter row is `next`. */
function tableHeader(text: string, next: string): string[] | null {
  if (!text.includes('|') || !next.includes('-')) return null;
  const delimiter = splitRow(next);
  if (!delimiter.every((cell) => DELIMITER_CELL.test(cell))) return null;
  const header = splitRow(text);
  return header.length === delimiter.length ? header : null;
}

function columnName(cell: string): string {
  return cell.trim() === '#' ? 'id' : cell.replace(/[^\p{L}\p{N}]+/gu, '').toLowerCase();
}

/** The column of each field, or null when the table has no Severity and Title columns. */
function findingColumns(header: readonly string[]): Columns | null {
  const names = header.map(columnName);
  const at = (name: string): number => names.indexOf(name);
  const columns = { severity: at('severity'), title: at('title'), file: at('file'), line: at('line'), fix: at('fix'), id: at('id') };
  return columns.severity < 0 || columns.title < 0 ? null : columns;
}

/** A cell without the emphasis or code marks that wrap it (`**x**`, `` `x` ``). */
function unwrap(cell: string): string {
  const m = /^(\*\*|__|`)(.*)\1$/.exec(cell.trim());
  return (m?.[2] ?? cell).trim();
}

const LINE_CELL = /^(\d{1,15})(?:\s*[-–]\s*\d{1,15})?$/;

function tableRow(cells: readonly string[], columns: Columns): { finding: ReviewFinding } | { bad: string } {
  const cell = (index: number): string => (index < 0 ? '' : unwrap(cells[index] ?? ''));
  const severityText = cell(columns.severity);
  const severity = normaliseSeverity(severityText);
  if (severity === null) return { bad: `severity ${quote(severityText)} is not ${SEVERITY_LIST}` };
  const title = checkTitle(cell(columns.title));
  if ('bad' in title) return title;
  const extra: { file?: string; line?: number; fix?: string } = {};
  const file = cell(columns.file);
  if (file !== '' && file !== '-') extra.file = file;
  const fix = cell(columns.fix);
  if (fix !== '' && fix !== '-') extra.fix = fix;
  const lineText = cell(columns.line);
  if (lineText !== '' && lineText !== '-') {
    // A range names its first line; anything else is refused rather than guessed.
    const line = Number(LINE_CELL.exec(lineText)?.[1] ?? Number.NaN);
    if (!Number.isSafeInteger(line) || line < 1) return { bad: `line ${quote(lineText)} is not a positive whole number` };
    extra.line = line;
  }
  const id = cell(columns.id);
  return { finding: makeFinding(id === '' || id === '-' ? null : id, severity, title.title, extra) };
}

// ---- list items ------------------------------------------------------------------------

/** A list marker (`-`, `*`, `+`, `1.`, `1)`) or a heading marker, then a space. */
const MARKER = /^[ \t]*(?:[-*+]|\d{1,9}[.)]|#{1,6})[ \t]+/;
const FINDING_LABEL = /^finding[ \t]+#?([\p{L}\p{N}][\p{L}\p{N}_.-]{0,23})[ \t]*[—–-][ \t]*/iu;
const SEVERITY_LABEL = /^(?:severity|sev)[ \t]*[:=][ \t]*/i;
const SEVERITY_WORD = /[ \t]+severity$/i;
const ONE_WORD = /^[^\p{L}\p{N}]*[\p{L}\p{N}_-]+[^\p{L}\p{N}]*$/u;
const CHECKBOX = /^[ xX]?$/;
/** A bracketed tag longer than this is prose, never a severity. */
const MAX_TAG = 48;

type ItemParse = { finding: ReviewFinding } | { bad: string } | null;

/**
 * One line read as a severity-tagged item: `- [High] title`, `1. [High] title`,
 * `1) [High] title`, `1. **[Severity: High] Title.** prose`, `**Finding 3 — High. Title.** prose`
 * (also after a list or heading marker). Null for prose. A line that starts like an item
 * (a list marker or bold, then a one-word or labelled tag, or `Finding <n> —`) but whose
 * severity is not recognised is bad, so it is refused and not skipped.
 */
function listItem(text: string): ItemParse {
  const marker = MARKER.exec(text);
  const body = marker === null ? text.trim() : text.slice(marker[0].length).trim();
  const bold = body.startsWith('**') || body.startsWith('__') ? body.slice(0, 2) : null;
  if (marker === null && bold === null) return null;
  // Inside bold, the item's own text ends at the closing mark; what follows is prose.
  let head = bold === null ? body : body.slice(2);
  let tail = '';
  if (bold !== null) {
    const end = head.indexOf(bold);
    if (end >= 0) {
      tail = head.slice(end + 2).trim();
      head = head.slice(0, end);
    }
  }
  head = head.trim();
  if (head.startsWith('[')) return taggedItem(head, tail, bold !== null);
  const label = FINDING_LABEL.exec(head);
  if (label !== null) return labelledItem(label[1] ?? '', head.slice(label[0].length), tail);
  if (SEVERITY_LABEL.test(head)) {
    return { bad: `${quote(head)} puts a severity label outside brackets; write "- [High] title"` };
  }
  return null;
}

function taggedItem(head: string, tail: string, bold: boolean): ItemParse {
  const close = head.indexOf(']');
  if (close < 0 || close > MAX_TAG) return null;
  const tag = head.slice(1, close).trim();
  const after = head.slice(close + 1);
  if (after.startsWith('(') || CHECKBOX.test(tag)) return null; // a link or a task-list box
  const labelled = SEVERITY_LABEL.exec(tag);
  const severityText = labelled === null ? tag.replace(SEVERITY_WORD, '') : tag.slice(labelled[0].length);
  if (labelled === null && !ONE_WORD.test(severityText)) return null; // a bracketed phrase is prose
  const severity = normaliseSeverity(severityText);
  if (severity === null) return { bad: `[${tag.slice(0, 40)}] is not a recognised severity (${SEVERITY_LIST})` };
  let title: string;
  if (bold) {
    // `**[High] Title.** prose` or `**[High]** title`
    title = after.trim() === '' ? tail : sentence(after);
  } else {
    const rest = after.trim();
    // `- [High] **Title.** prose`: a bold lead sentence is the title; other bold is text.
    const inner = /^(\*\*|__)(.+?)\1/.exec(rest);
    title = inner !== null && inner[2]?.trim().endsWith('.') === true ? sentence(inner[2]) : rest;
  }
  return item(null, severity, title);
}

function labelledItem(ref: string, rest: string, tail: string): ItemParse {
  // The severity runs to the first '.', ':', dash or " - "; the title follows.
  const separator = /[.:—–]| - /.exec(rest);
  const severityText = (separator === null ? rest : rest.slice(0, separator.index)).trim().replace(SEVERITY_WORD, '');
  const severity = normaliseSeverity(severityText);
  if (severity === null) return { bad: `finding ${ref}: ${quote(severityText)} is not a recognised severity (${SEVERITY_LIST})` };
  const after = separator === null ? '' : rest.slice(separator.index + separator[0].length);
  return item(ref, severity, after.trim() === '' ? tail : sentence(after));
}

/** A bold lead sentence as a title: trimmed, without its closing period. */
function sentence(text: string): string {
  const trimmed = text.trim();
  return trimmed.endsWith('.') ? trimmed.slice(0, -1).trimEnd() : trimmed;
}

/** A separator between the tag and the title (`[High]: title`, `[High] — title`). */
const LEADING_SEPARATOR = /^(?:[:—–]|-(?=\s))\s*/;

function item(ref: string | null, severity: Severity, rawTitle: string): ItemParse {
  const title = checkTitle(rawTitle.trim().replace(LEADING_SEPARATOR, ''));
  return 'bad' in title ? { bad: `${severity} item: ${title.bad}` } : { finding: makeFinding(ref, severity, title.title) };
}
