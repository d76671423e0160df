import { readFileSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { errnoCode } from '../../formats/error.ts';
import { issue, type Issue } from '../../formats/issue.ts';
import { MAX_LINE_BYTES } from '../../formats/jsonl-lines.ts';
import { checkSchema } from '../../formats/schema-check.ts';
import { SCHEMAS, type SchemaName } from '../../formats/schemas/index.ts';
import { checkJsonlFile } from './jsonl-artifact.ts';

/** The verdict on one artifact file checked against one named schema (`validate --as`). */
export interface FileReport {
  readonly valid: boolean;
  readonly schema: SchemaName;
  readonly file: string;
  /** Rows for a JSONL schema, 1 for a JSON document that parsed, else 0. */
  readonly rows: number;
  readonly errors: readonly Issue[];
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
  const done = (rows: number, errors: Issue[]): FileReport => ({ valid: errors.length === 0, schema, file, rows, errors });
  let size: number;
  try {
    const stat = statSync(file);
    if (!stat.isFile()) return done(0, [issue('ARTIFACT_MISSING', display, `${file} is not a regular file`)]);
    size = stat.size;
  } catch (error) {
    const why = errnoCode(error) === 'ENOENT' ? 'does not exist' : 'cannot be read';
    return done(0, [issue('ARTIFACT_MISSING', display, `${file} ${why}`)]);
  }
  try {
    if (entry.jsonl) {
      const result = checkJsonlFile(file, onRow === undefined ? { display, schema: entry.schema, runId } : { display, schema: entry.schema, runId, onRow });
      return done(result.lines, result.issues);
    }
    if (size === 0) return done(0, [issue('ARTIFACT_INVALID_JSON', display, 'empty file')]);
    if (size > MAX_LINE_BYTES) return done(0, [issue('ARTIFACT_INVALID_JSON', display, 'file over 16 MiB')]);
    let value: unknown;
    try {
      value = JSON.parse(readFileSync(file, 'utf8'));
    } catch (error) {
      if (errnoCode(error) !== undefined) throw error;
      return done(0, [issue('ARTIFACT_INVALID_JSON', display, 'not valid JSON')]);
    }
    return done(1, checkSchema(entry.schema, value, display) ?? []);
  } catch {
    return done(0, [issue('ARTIFACT_MISSING', display, `${file} cannot be read as a file`)]);
  }
}
