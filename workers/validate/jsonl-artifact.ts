import { issue, type Issue } from '../../formats/issue.ts';
import { JsonlLineSplitter } from '../../formats/jsonl-lines.ts';
import { parseJsonlRow } from '../../formats/jsonl-row.ts';
import { checkSchema } from '../../formats/schema-check.ts';
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
}

export interface JsonlResult extends StreamedFile {
  /** Lines in the file; every line is meant to be one row. */
  readonly lines: number;
  readonly issues: Issue[];
}

/**
 * Streams one JSONL artifact: hashes it, checks every row against its schema, its binding
 * to the run and the uniqueness of its id. Memory grows only with the id index.
 */
export function checkJsonlFile(file: string, check: JsonlCheck): JsonlResult {
  const { display, schema, runId, onRow } = check;
  const issues: Issue[] = [];
  const ids = new IdIndex();
  const candidates: [line: number, earlier: number][] = [];
  const prefix = runId === undefined ? '' : `${runId}-`;
  let lastMalformed = 0;
  let lastMalformedAt = -1;

  const splitter = new JsonlLineSplitter((text, line) => {
    const parsed = parseJsonlRow(text);
    if ('malformed' in parsed) {
      lastMalformed = line;
      lastMalformedAt = issues.length;
      issues.push(issue('ARTIFACT_MALFORMED_JSONL', `${display}:${line}`, parsed.malformed));
      return;
    }
    const row = parsed.row;
    const rowIssues = checkSchema(schema, row, `${display}:${line}`);
    if (rowIssues !== undefined) for (const found of rowIssues) issues.push(found);
    onRow?.(row, line, rowIssues === undefined);
    const id = row['id'];
    if (typeof id !== 'string') return;
    if (runId !== undefined && (row['run'] !== runId || !id.startsWith(prefix))) {
      const why = row['run'] !== runId ? `run ${JSON.stringify(row['run'])} is not ${runId}` : `id ${id} does not start with ${prefix}`;
      issues.push(issue('ARTIFACT_UNBOUND_ID', `${display}:${line}.id`, why));
    }
    const earlier = ids.add(id, line);
    if (earlier !== 0) candidates.push([line, earlier]);
  });

  const streamed = streamFile(file, (chunk) => splitter.push(chunk));
  splitter.end();

  if (lastMalformed !== 0 && lastMalformed === splitter.lines) {
    const tail = issues[lastMalformedAt]!;
    issues[lastMalformedAt] = issue(tail.code, tail.path, `malformed tail: ${tail.message}`);
  }
  if (candidates.length > 0) {
    for (const found of confirmDuplicates(file, display, candidates)) issues.push(found);
  }
  return { ...streamed, lines: splitter.lines, issues };
}

/** Re-reads only the lines whose ids hashed alike and reports the ones that are equal. */
function confirmDuplicates(file: string, display: string, candidates: readonly [number, number][]): Issue[] {
  const wanted = new Set<number>();
  for (const [line, earlier] of candidates) {
    wanted.add(line);
    wanted.add(earlier);
  }
  const idAt = new Map<number, string>();
  const splitter = new JsonlLineSplitter((text, line) => {
    if (!wanted.has(line)) return;
    const parsed = parseJsonlRow(text);
    if ('row' in parsed && typeof parsed.row['id'] === 'string') idAt.set(line, parsed.row['id']);
  });
  streamFile(file, (chunk) => splitter.push(chunk));
  splitter.end();
  // Lines that hashed alike are grouped by the first line of their hash, then compared
  // exactly within the group, so even two colliding ids that are each repeated are told apart.
  const groups = new Map<number, number[]>();
  for (const [line, earlier] of candidates) {
    const group = groups.get(earlier);
    if (group === undefined) groups.set(earlier, [line]);
    else group.push(line);
  }
  const found: Issue[] = [];
  for (const [earlier, lines] of groups) {
    const firstSeen = new Map<string, number>();
    const first = idAt.get(earlier);
    if (first !== undefined) firstSeen.set(first, earlier);
    for (const line of lines) {
      const id = idAt.get(line);
      if (id === undefined) continue;
      const before = firstSeen.get(id);
      if (before === undefined) firstSeen.set(id, line);
      else found.push(issue('ARTIFACT_DUPLICATE_ID', `${display}:${line}.id`, `id ${id} first used at line ${before}`));
    }
  }
  return found;
}
