import { statSync } from 'node:fs';
import { basename } from 'node:path';
import { errnoCode } from '../../formats/codes/error.ts';
import { issue, type Issue } from '../../formats/codes/issue.ts';
import { IssueList } from '../../formats/schemas/issue-list.ts';
import { checkSchema } from '../../formats/schemas/check.ts';
import { SCHEMAS, type SchemaName } from '../../formats/schemas/index.ts';
import { readJsonDocument } from './json-document.ts';
import { checkJsonlFile } from './jsonl-artifact.ts';

/** The verdict on one artifact file checked against one named schema (`validate --as`). */
export interface FileReport {
  readonly valid: boolean;
  readonly schema: SchemaName;
  readonly file: string;
  /** Rows for a JSONL schema, 1 for a JSON document that parsed, else 0. */
  readonly rows: number;
  /** The first ERROR_CAP errors. */
  readonly errors: readonly Issue[];
  /** Errors counted past the cap; present only when there are some. */
  readonly errors_omitted?: number;
}

/**
 * Checks one file against one schema: JSONL schemas row by row (streamed, with ids
 * checked for uniqueness and, given a run id, for binding), the others as one document.
 */
export function validateFile(
  file: string,
  schema: SchemaName,
  runId: string | undefined,
  onRow?: (row: Record<string, unknown>, line: number, valid: boolean) => void,
): FileReport {
  const entry = SCHEMAS[schema];
  const display = basename(file);
  const done = (rows: number, found: Issue[] | IssueList): FileReport => {
    const errors = found instanceof IssueList ? found.items : found;
    const omitted = found instanceof IssueList ? found.omitted : 0;
    // errors_omitted appears only when the cap was reached, so the usual object keeps its keys.
    return { valid: errors.length === 0, schema, file, rows, errors, ...(omitted > 0 ? { errors_omitted: omitted } : {}) };
  };
  if (!entry.jsonl) {
    const read = readJsonDocument(file, display);
    if ('issue' in read) return done(0, [read.issue]);
    return done(1, checkSchema(entry.schema, read.value, display) ?? []);
  }
  try {
    if (!statSync(file).isFile()) return done(0, [issue('ARTIFACT_MISSING', display, `${file} is not a regular file`)]);
  } catch (error) {
    const why = errnoCode(error) === 'ENOENT' ? 'does not exist' : 'cannot be read';
    return done(0, [issue('ARTIFACT_MISSING', display, `${file} ${why}`)]);
  }
  try {
    const result = checkJsonlFile(file, onRow === undefined ? { display, schema: entry.schema, runId } : { display, schema: entry.schema, runId, onRow });
    return done(result.lines, result.issues);
  } catch (error) {
    if (errnoCode(error) === undefined) throw error;
    return done(0, [issue('ARTIFACT_MISSING', display, `${file} cannot be read as a file`)]);
  }
}
