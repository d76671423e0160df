import { issue } from '../../formats/codes/issue.ts';
import { ERROR_CAP, IssueList } from '../../formats/schemas/issue-list.ts';
import { JsonlLineSplitter, MAX_LINE_BYTES, type ByteLineSink } from '../../formats/jsonl/lines.ts';
import { parseJsonlObject, parseJsonlRow } from '../../formats/jsonl/row.ts';
import { RowBytesCheck } from '../../formats/jsonl/row-bytes.ts';
import { rowShapeOf } from '../../formats/jsonl/row-shape.ts';
import { checkSchema } from '../../formats/schemas/check.ts';
import type { AnySchema } from '../../formats/schemas/index.ts';
import { streamFile, type StreamedFile } from './file-stream.ts';
import { IdIndex } from './id-index.ts';

export interface JsonlCheck {
  /** How the file is named in error paths: `findings.jsonl`. */
  readonly display: string;
  readonly schema: AnySchema;
  /** The manifest's run id; rows are bound to it. Undefined skips the binding check. */
  readonly runId: string | undefined;
  /** Called for each line that is a JSON object; `valid` says whether it passed its schema. */
  readonly onRow?: (row: Record<string, unknown>, line: number, valid: boolean) => void;
  /**
   * Called instead of `onRow` for a line accepted on its bytes (a valid row bound to the
   * run, never parsed): its id. A check with `onRow` but without this parses every line.
   */
  readonly onValidId?: ((id: string, line: number) => void) | undefined;
}

export interface JsonlResult extends StreamedFile {
  /** Lines in the file; every line is meant to be one row. */
  readonly lines: number;
  readonly issues: IssueList;
}

/**
 * Streams one JSONL artifact: hashes it, checks every row against its schema, its binding
 * to the run and the uniqueness of its id. Memory grows only with the id index and the
 * duplicate candidates (two numbers each); issues past the cap are only counted.
 */
export function checkJsonlFile(file: string, check: JsonlCheck): JsonlResult {
  const { display, schema, runId, onRow, onValidId } = check;
  const issues = new IssueList();
  const ids = new IdIndex();
  const candidates = new LinePairs();
  const prefix = runId === undefined ? '' : `${runId}-`;
  let lastMalformed = 0;
  let lastMalformedAt = -1;

  const splitter = new JsonlLineSplitter((text, line, problem) => {
    const row = parseJsonlObject(text, problem);
    if (typeof row === 'string') {
      lastMalformed = line;
      // Where its issue is kept, if it is kept at all (it may lie past the cap).
      lastMalformedAt = issues.items.length === issues.total && issues.items.length < ERROR_CAP ? issues.items.length : -1;
      issues.push(issue('ARTIFACT_MALFORMED_JSONL', `${display}:${line}`, row));
      return;
    }
    // Hint: the compiled predicate (once the schema has checked a few rows) answers for a
    // valid row; only a row it refuses pays for valibot's issues and an error path.
    const rowIssues = checkSchema(schema, row, () => `${display}:${line}`);
    if (rowIssues !== undefined) for (const found of rowIssues) issues.push(found);
    onRow?.(row, line, rowIssues === undefined);
    const id = row['id'];
    if (typeof id !== 'string') return;
    if (runId !== undefined && (row['run'] !== runId || !id.startsWith(prefix))) {
      const why = row['run'] !== runId ? `run ${describe(row['run'])} is not ${runId}` : `id ${id} does not start with ${prefix}`;
      issues.push(issue('ARTIFACT_UNBOUND_ID', `${display}:${line}.id`, why));
    }
    const earlier = ids.add(id, line);
    if (earlier !== 0) candidates.add(line, earlier);
  }, MAX_LINE_BYTES, byteSinkFor(check, (id, line) => {
    onValidId?.(id, line);
    const earlier = ids.add(id, line);
    if (earlier !== 0) candidates.add(line, earlier);
  }));

  const streamed = streamFile(file, (chunk) => splitter.push(chunk));
  splitter.end();

  if (lastMalformed !== 0 && lastMalformed === splitter.lines && lastMalformedAt !== -1) {
    const tail = issues.items[lastMalformedAt]!;
    issues.items[lastMalformedAt] = issue(tail.code, tail.path, `malformed tail: ${tail.message}`);
  }
  if (candidates.size > 0) confirmDuplicates(file, display, candidates, issues);
  return { ...streamed, lines: splitter.lines, issues };
}

/**
 * The byte-level hot path, when the schema allows it and nothing needs the parsed row:
 * a line it accepts is a valid row bound to the run, and only its id is handed on (what
 * the ordinary path does with such a row after its checks). Chunks are Buffers.
 */
function byteSinkFor(check: JsonlCheck, accepted: (id: string, line: number) => void): ByteLineSink | undefined {
  if (check.onRow !== undefined && check.onValidId === undefined) return undefined;
  const shape = rowShapeOf(check.schema);
  if (shape === null) return undefined;
  const rows = new RowBytesCheck(shape, check.runId);
  return (bytes, start, end, line) => {
    if (!rows.accept(bytes, start, end)) return false;
    // ASCII without escapes (accept() refused anything else), so latin1 is the exact text.
    accepted((bytes as Buffer).toString('latin1', rows.idStart, rows.idEnd), line);
    return true;
  };
}

/** A value as a message shows it: strings quoted, anything else by its type, never rendered whole. */
function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null || typeof value !== 'object') return String(value);
  return Array.isArray(value) ? 'an array' : 'an object';
}

/** Pairs of line numbers in two growing typed arrays: 8 bytes a pair, not an array each. */
class LinePairs {
  lines = new Uint32Array(64);
  earlier = new Uint32Array(64);
  size = 0;

  add(line: number, earlier: number): void {
    if (this.size === this.lines.length) {
      const grow = (from: Uint32Array) => {
        const to = new Uint32Array(from.length * 2);
        to.set(from);
        return to;
      };
      this.lines = grow(this.lines);
      this.earlier = grow(this.earlier);
    }
    this.lines[this.size] = line;
    this.earlier[this.size] = earlier;
    this.size += 1;
  }
}

/**
 * Re-reads the file and reports the candidate lines whose id equals an earlier one. Each
 * candidate names the first line its hash was seen on (its group's head, always earlier),
 * so only the heads' ids are kept, never one string per duplicate. A line whose id merely
 * collides with its head is compared with the other colliders of its group.
 */
function confirmDuplicates(file: string, display: string, candidates: LinePairs, issues: IssueList): void {
  // Candidates were added in file order; heads are sorted once. Two cursors walk them
  // while the lines stream past, so no map from every candidate line is built.
  const heads = Uint32Array.from(new Set(candidates.earlier.subarray(0, candidates.size))).sort();
  let nextHead = 0;
  let nextCandidate = 0;
  const headId = new Map<number, string>();
  // Per head, ids that collided with it (a 64-bit hash collision: practically never).
  const colliders = new Map<number, Map<string, number>>();
  const idOf = (text: string | null): string | undefined => {
    const parsed = parseJsonlRow(text);
    return 'row' in parsed && typeof parsed.row['id'] === 'string' ? parsed.row['id'] : undefined;
  };
  const splitter = new JsonlLineSplitter((text, line) => {
    if (nextHead < heads.length && heads[nextHead] === line) {
      nextHead += 1;
      const id = idOf(text);
      if (id !== undefined) headId.set(line, id);
      return;
    }
    if (nextCandidate >= candidates.size || candidates.lines[nextCandidate] !== line) return;
    const head = candidates.earlier[nextCandidate++]!;
    const id = idOf(text);
    if (id === undefined) return;
    if (headId.get(head) === id) {
      issues.push(issue('ARTIFACT_DUPLICATE_ID', `${display}:${line}.id`, `id ${id} first used at line ${head}`));
      return;
    }
    let seen = colliders.get(head);
    if (seen === undefined) colliders.set(head, (seen = new Map()));
    const before = seen.get(id);
    if (before === undefined) seen.set(id, line);
    else issues.push(issue('ARTIFACT_DUPLICATE_ID', `${display}:${line}.id`, `id ${id} first used at line ${before}`));
  });
  streamFile(file, (chunk) => splitter.push(chunk));
  splitter.end();
}

