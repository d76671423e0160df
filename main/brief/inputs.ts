import { statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseSpendLine, type BriefInput } from '../../formats/brief/brief.ts';
import { issue, type Issue } from '../../formats/codes/issue.ts';
import { checkSchema } from '../../formats/schemas/check.ts';
import type { DecisionRow } from '../../formats/schemas/decisions.ts';
import type { FindingRow } from '../../formats/schemas/findings.ts';
import { gateSchema, type Gate } from '../../formats/schemas/gate.ts';
import { timingSchema, type TimingDocument } from '../../formats/schemas/timing.ts';
import { readJsonDocument } from '../../workers/validate/json-document.ts';
import { validateFile } from '../../workers/validate/validate-file.ts';
import { tryReadBounded } from '../fs/read-bounded.ts';

/** The brief's inputs, or every issue that stops it (each names its file). */
export type Loaded<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly issues: readonly Issue[] };

const MAX_TEXT_BYTES = 16 * 1024 * 1024;

/**
 * Reads what a brief page is built from. gate.json, decisions.jsonl and findings.jsonl
 * are required: absent or unreadable is BRIEF_INPUT_MISSING, content that is not JSON or
 * fails its schema keeps the validator's code. timing.json, review-record.md and
 * summary.md are optional: absent means "not recorded", present but unreadable or
 * invalid refuses like a required file, so a broken file is never silently ignored.
 */
export function loadBriefInput(runDir: string, summaryFile: string | undefined): Loaded<BriefInput> {
  const gate = loadGate(runDir);
  if (!gate.ok) return gate;
  const issues: Issue[] = [];
  const decisions = loadRows<DecisionRow>(join(runDir, 'decisions.jsonl'), 'decisions', gate.value.run, issues);
  const findings = loadRows<FindingRow>(join(runDir, 'findings.jsonl'), 'findings', gate.value.run, issues);
  const timing = loadTiming(join(runDir, 'timing.json'), issues);
  const record = loadText(join(runDir, 'review-record.md'), false, issues);
  const summary = summaryFile === undefined ? loadText(join(runDir, 'summary.md'), false, issues) : loadText(summaryFile, true, issues);
  if (issues.length > 0) return { ok: false, issues };
  const own = summary === null || summary.trim() === '' ? null : summary;
  return {
    ok: true,
    value: { gate: gate.value, decisions, findings, timing, spend: record === null ? null : parseSpendLine(record), summary: own, runDir },
  };
}

/** gate.json alone, for `brief close`, which needs the labels and option texts. */
export function loadGate(runDir: string): Loaded<Gate> {
  const file = join(runDir, 'gate.json');
  const read = readJsonDocument(file, 'gate.json');
  if ('issue' in read) return { ok: false, issues: [missingAsBrief(read.issue)] };
  const problems = checkSchema(gateSchema, read.value, 'gate.json');
  return problems === undefined ? { ok: true, value: read.value as Gate } : { ok: false, issues: problems };
}

/** The rows of one JSONL input, schema-checked and bound to the gate's run. */
export function loadRows<T>(file: string, schema: 'decisions' | 'findings', run: string, issues: Issue[]): T[] {
  const rows: T[] = [];
  const report = validateFile(file, schema, run, (row, _line, valid) => {
    if (valid) rows.push(row as T);
  });
  for (const found of report.errors) issues.push(missingAsBrief(found));
  return rows;
}

function loadTiming(file: string, issues: Issue[]): TimingDocument | null {
  if (!exists(file)) return null;
  const read = readJsonDocument(file, 'timing.json');
  if ('issue' in read) {
    issues.push(missingAsBrief(read.issue));
    return null;
  }
  const problems = checkSchema(timingSchema, read.value, 'timing.json');
  if (problems !== undefined) issues.push(...problems);
  return problems === undefined ? (read.value as TimingDocument) : null;
}

/** A text input as UTF-8; null when an optional one is absent. */
function loadText(file: string, required: boolean, issues: Issue[]): string | null {
  if (!required && !exists(file)) return null;
  const read = tryReadBounded(file, MAX_TEXT_BYTES);
  if (!read.ok) {
    issues.push(issue('BRIEF_INPUT_MISSING', basename(file), read.detail));
    return null;
  }
  return read.bytes.toString('utf8');
}

function exists(file: string): boolean {
  try {
    return statSync(file, { throwIfNoEntry: false }) !== undefined;
  } catch {
    // A path that cannot even be stat'ed (a file where a directory should be) is there
    // in the sense that matters: reading it will fail and name it.
    return true;
  }
}

/** The validator's "absent or not a file" becomes the brief's own code, naming the file. */
function missingAsBrief(found: Issue): Issue {
  return found.code === 'ARTIFACT_MISSING' ? issue('BRIEF_INPUT_MISSING', found.path, found.message) : found;
}
