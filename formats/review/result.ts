import { findingFromJsonLine, type ReviewFinding } from './finding.ts';
import { parseRecordShapes } from './record-tables.ts';
import { quote } from './severity.ts';
import { decodeUtf8 } from '../text/utf8.ts';


/** Where a result's findings were read from. */
export type ResultShape = 'fence' | 'table' | 'list' | 'none';

export interface ParseResultOptions {
  readonly phase: string;
  /** 64 lowercase hex. */
  readonly snapshot: string;
  /** submit --record: the hand-run shapes are allowed. */
  readonly record: boolean;
  /** --attest given: a missing INPUT line is allowed (record only). */
  readonly attested: boolean;
}

/**
 * A result's findings, or why it is refused. `message` is the detail alone (the caller
 * adds the file and `line`, 1-based in the file, null when no one line is at fault).
 */
export type ParsedResult =
  | { ok: true; receipt: 'input' | 'attested'; shape: ResultShape; findings: ReviewFinding[] }
  | { ok: false; code: 'RESULT_RECEIPT_MISSING' | 'RESULT_FINDINGS_MISSING'; message: string; line: number | null };

const SNAPSHOT = /^[0-9a-f]{64}$/;
const PHASE = /^[^\s\u0000-\u001f\u007f]{1,64}$/u;

/**
 * Reads a reviewer's result file. The receipt is checked first: a file that is empty,
 * not text, or without its INPUT line is RESULT_RECEIPT_MISSING before anything else is
 * looked at. Then the findings: exactly one `gstack-findings` fence (in every submit,
 * record or not, the fence is the result when there is one), else for a record one
 * hand-run shape; anything unreadable is RESULT_FINDINGS_MISSING with its line.
 * Linear in the input: one decode, one split, one pass per stage, no recursion.
 * Throws RangeError only for options no run can hold (the caller's bug, not the input's).
 */
export function parseReviewResult(bytes: Uint8Array, options: ParseResultOptions): ParsedResult {
  if (!PHASE.test(options.phase)) throw new RangeError(`phase ${quote(options.phase)} is not a phase name`);
  if (!SNAPSHOT.test(options.snapshot)) throw new RangeError('snapshot is not 64 lowercase hex');

  const { text, badLine } = decodeUtf8(bytes);
  const nul = bytes.indexOf(0);
  const nulLine = nul < 0 ? null : lineOfOffset(bytes, nul);
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i] ?? '';
    if (line.endsWith('\r')) lines[i] = line.slice(0, -1);
  }

  const receipt = checkReceipt(lines, options, text.trim() === '');
  if ('code' in receipt) return receipt;
  const start = receipt.receipt === 'input' ? 1 : 0;

  const broken = firstOf(badLine, nulLine);
  if (broken !== null) {
    return refuse(broken === badLine ? 'the line is not UTF-8 text' : 'the line holds a NUL byte', broken);
  }
  if (lines.slice(start).every((line) => line.trim() === '')) {
    return refuse(start === 1 ? 'nothing follows the INPUT line' : 'the file is empty', null);
  }

  const scan = scanBlocks(lines, start);
  if ('message' in scan) return refuse(scan.message, scan.line);
  const [fence, second] = scan.fences;
  if (second !== undefined) {
    return refuse(`a second gstack-findings fence (the first opens at line ${fence?.open ?? 0}); write exactly one`, second.open);
  }
  if (fence !== undefined) {
    const findings: ReviewFinding[] = [];
    for (let i = fence.open; i < fence.close - 1; i += 1) {
      const row = lines[i] ?? '';
      if (row.trim() === '') continue;
      const parsed = findingFromJsonLine(row.trim());
      if ('bad' in parsed) return refuse(`findings row: ${parsed.bad}`, i + 1);
      findings.push(parsed.finding);
    }
    return { ok: true, receipt: receipt.receipt, shape: 'fence', findings };
  }
  if (!options.record) return refuse('no gstack-findings fence', null);
  const shapes = parseRecordShapes(lines, start, scan.inBlock);
  if (!shapes.ok) return refuse(shapes.message, shapes.line);
  return { ok: true, receipt: receipt.receipt, shape: shapes.shape, findings: shapes.findings };
}

function refuse(message: string, line: number | null): ParsedResult {
  return { ok: false, code: 'RESULT_FINDINGS_MISSING', message, line };
}

function firstOf(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  return b === null ? a : Math.min(a, b);
}

// ---- text ------------------------------------------------------------------------------

function lineOfOffset(bytes: Uint8Array, offset: number): number {
  let line = 1;
  for (let at = bytes.indexOf(0x0a); at >= 0 && at < offset; at = bytes.indexOf(0x0a, at + 1)) line += 1;
  return line;
}

// ---- receipt ---------------------------------------------------------------------------

const INPUT_LIKE = /^\s*input\s*:/i;
const INPUT_LINE = /^INPUT: (\S+) (\S+)\s*$/;

type ReceiptCheck = { receipt: 'input' | 'attested' } | Extract<ParsedResult, { ok: false }>;

/**
 * The first line must be `INPUT: <phase> <snapshot>`. An attested record may lack it, but
 * a receipt that is there and wrong (on the first line, or a stray INPUT line lower down)
 * is refused even then: the attestation covers a missing receipt, not a different one.
 */
function checkReceipt(lines: readonly string[], options: ParseResultOptions, empty: boolean): ReceiptCheck {
  const first = (lines[0] ?? '').trimEnd();
  if (first === `INPUT: ${options.phase} ${options.snapshot}`) return { receipt: 'input' };
  const attested = options.record && options.attested;
  const missing = (message: string, line: number | null): ReceiptCheck => ({
    ok: false,
    code: 'RESULT_RECEIPT_MISSING',
    message: attested ? `${message}; --attest covers only a missing INPUT line` : message,
    line,
  });
  if (INPUT_LIKE.test(first)) {
    const named = INPUT_LINE.exec(first);
    if (named === null) return missing(`the first line ${quote(first)} is not "INPUT: <phase> <snapshot>"`, 1);
    if (named[1] !== options.phase) return missing(`the INPUT line names phase ${quote(named[1] ?? '')}, not ${quote(options.phase)}`, 1);
    return missing(`the INPUT line names snapshot ${quote(named[2] ?? '')}, not ${options.snapshot.slice(0, 12)}…`, 1);
  }
  const stray = lines.findIndex((line) => INPUT_LINE.test(line));
  if (stray > 0) return missing(`the INPUT line is at line ${stray + 1}, not the first line`, stray + 1);
  if (attested) return { receipt: 'attested' };
  if (empty) return missing('the file is empty', null);
  return missing(`the first line is not an INPUT line (expected "INPUT: ${options.phase} ${options.snapshot.slice(0, 12)}…")`, 1);
}

// ---- fences ----------------------------------------------------------------------------

/** A findings fence: `open` is the opening line (1-based), `close` the closing line. */
interface Fence {
  readonly open: number;
  readonly close: number;
}

type BlockScan = { fences: Fence[]; inBlock: Uint8Array } | { message: string; line: number };

const FENCE_OPEN = /^( {0,3})(`{3,}|~{3,})(.*)$/;
const FINDINGS_INFO = /^[ \t]*gstack-findings(?:[ \t].*)?$/;
const MISPLACED_FINDINGS_FENCE = /^(?: {4,}| *\t)[ \t]*(?:`{3,}|~{3,})[ \t]*gstack-findings\b/;

/**
 * Marks every line inside a fenced code block, so that examples quoted in the prose are
 * never read as findings, and collects the findings fences. A fence left open swallows
 * the rest of the file, so it is refused rather than read either way.
 */
function scanBlocks(lines: readonly string[], start: number): BlockScan {
  const inBlock = new Uint8Array(lines.length);
  const fences: Fence[] = [];
  let open: { line: number; mark: string; findings: boolean } | null = null;
  for (let i = start; i < lines.length; i += 1) {
    const text = lines[i] ?? '';
    if (open !== null) {
      inBlock[i] = 1;
      if (isClosing(text, open.mark)) {
        if (open.findings) fences.push({ open: open.line, close: i + 1 });
        open = null;
      }
      continue;
    }
    const m = FENCE_OPEN.exec(text);
    const info = m?.[3] ?? '';
    // A backtick fence's info string holds no backtick (```x``` is inline code).
    if (m === null || (m[2]?.startsWith('`') === true && info.includes('`'))) {
      if (MISPLACED_FINDINGS_FENCE.test(text)) {
        return { message: 'the gstack-findings fence is indented more than 3 spaces', line: i + 1 };
      }
      continue;
    }
    inBlock[i] = 1;
    open = { line: i + 1, mark: m[2] ?? '```', findings: FINDINGS_INFO.test(info) };
  }
  if (open !== null) {
    const what = open.findings ? 'the gstack-findings fence' : 'a code fence';
    return { message: `${what} opened here is never closed`, line: open.line };
  }
  return { fences, inBlock };
}

/** A closing fence: up to 3 spaces, the same mark at least as long, nothing after. */
function isClosing(text: string, mark: string): boolean {
  const body = text.trimEnd();
  const indent = body.length - body.trimStart().length;
  if (indent > 3 || body.slice(0, indent).includes('\t')) return false;
  const run = body.slice(indent);
  return run.length >= mark.length && run === (mark[0] ?? '`').repeat(run.length);
}
