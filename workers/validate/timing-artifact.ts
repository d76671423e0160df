import { issue, type Issue } from '../../formats/codes/issue.ts';
import { MAX_LINE_BYTES } from '../../formats/jsonl/lines.ts';
import { checkSchema } from '../../formats/schemas/check.ts';
import { timingSchema } from '../../formats/schemas/timing.ts';
import { parseJsonDocument } from './json-document.ts';

/** timing.json's bytes (up to MAX_LINE_BYTES of `size`) checked: its JSON, its schema, and that it is bound to the run. */
export function checkTiming(bytes: Buffer, size: number, display: string, runId: string): Issue[] {
  if (size > MAX_LINE_BYTES) return [issue('ARTIFACT_INVALID_JSON', display, 'file over 16 MiB')];
  const parsed = parseJsonDocument(bytes, display);
  if ('issue' in parsed) return [parsed.issue];
  const value = parsed.value;
  const found = checkSchema(timingSchema, value, display) ?? [];
  const run = (value as { run?: unknown } | null)?.run;
  if (found.length === 0 && run !== runId) {
    found.push(issue('ARTIFACT_UNBOUND_ID', `${display}.run`, `run ${typeof run === 'string' ? JSON.stringify(run) : String(run)} is not ${runId}`));
  }
  return found;
}
