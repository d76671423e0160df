import { parseJsonlRow } from '../jsonl/row.ts';
import { CHANGES, normaliseSeverity, quote, SEVERITY_LIST, type Changes, type Severity } from './severity.ts';

/** One finding as a review result states it, before it is bound to a run. */
export interface ReviewFinding {
  /** The reviewer's own id ("F1") when given. */
  readonly ref: string | null;
  readonly severity: Severity;
  /** One line, trimmed, non-empty. */
  readonly title: string;
  readonly file?: string;
  /** A positive safe integer. */
  readonly line?: number;
  readonly fix?: string;
  readonly user_challenge?: true;
  /** Present whenever user_challenge is. */
  readonly changes?: Changes;
  readonly urgent?: true;
  /** Present whenever urgent is. */
  readonly suggested_owner?: string;
}

export type FindingParse = { readonly finding: ReviewFinding } | { readonly bad: string };

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const LINE_BREAK = /[\n\r\u2028\u2029]/;

/** A title as every shape keeps it: trimmed, one line, non-empty; or why it is not one. */
export function checkTitle(raw: string): { title: string } | { bad: string } {
  const title = raw.trim();
  if (title === '') return { bad: 'the title is empty' };
  if (LINE_BREAK.test(title)) return { bad: 'the title is not one line' };
  return { title };
}

/**
 * One line of a findings fence: a JSON object with severity and title. Optional fields
 * that are null or empty strings count as absent (reviewers write `"file": null`); a
 * field of the wrong type is a bad row, never dropped.
 */
export function findingFromJsonLine(text: string): FindingParse {
  const parsed = parseJsonlRow(text);
  if ('malformed' in parsed) return { bad: parsed.malformed };
  const row = parsed.row;

  const severityRaw = row['severity'];
  if (typeof severityRaw !== 'string') return { bad: severityRaw === undefined ? 'severity is missing' : 'severity is not a string' };
  const severity = normaliseSeverity(severityRaw);
  if (severity === null) return { bad: `severity ${quote(severityRaw)} is not ${SEVERITY_LIST}` };

  const titleRaw = row['title'];
  if (typeof titleRaw !== 'string') return { bad: titleRaw === undefined ? 'title is missing' : 'title is not a string' };
  const title = checkTitle(titleRaw);
  if ('bad' in title) return title;

  const id = row['id'];
  let ref: string | null = null;
  if (typeof id === 'string') ref = id.trim() === '' ? null : id.trim();
  else if (typeof id === 'number' && Number.isSafeInteger(id)) ref = String(id);
  else if (id !== undefined && id !== null) return { bad: 'id is not a string' };

  const extra: Partial<Mutable<ReviewFinding>> = {};
  for (const key of ['file', 'fix', 'suggested_owner'] as const) {
    const value = row[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') return { bad: `${key} is not a string` };
    if (value.trim() !== '') extra[key] = value.trim();
  }

  const line = row['line'];
  if (line !== undefined && line !== null) {
    if (typeof line !== 'number' || !Number.isSafeInteger(line) || line < 1) return { bad: 'line is not a positive whole number' };
    extra.line = line;
  }

  const changes = row['changes'];
  if (changes !== undefined && changes !== null) {
    const known = typeof changes === 'string' ? CHANGES.find((c) => c === changes.trim().toLowerCase()) : undefined;
    if (known === undefined) return { bad: `changes ${quote(String(changes))} is not scope, cost or direction` };
    extra.changes = known;
  }

  for (const key of ['user_challenge', 'urgent'] as const) {
    const value = row[key];
    if (value === undefined || value === null || value === false) continue;
    if (value !== true) return { bad: `${key} is not true or false` };
    extra[key] = true;
  }
  if (extra.user_challenge === true && extra.changes === undefined) {
    return { bad: 'user_challenge needs "changes": scope, cost or direction' };
  }
  if (extra.urgent === true && extra.suggested_owner === undefined) {
    return { bad: 'urgent needs a non-empty "suggested_owner"' };
  }
  return { finding: makeFinding(ref, severity, title.title, extra) };
}

/**
 * A finding from its parts, in the same key order whatever shape it came from, so bound
 * results serialise the same way.
 */
export function makeFinding(ref: string | null, severity: Severity, title: string, extra: Partial<Mutable<ReviewFinding>> = {}): ReviewFinding {
  const out: Mutable<ReviewFinding> = { ref, severity, title };
  if (extra.file !== undefined) out.file = extra.file;
  if (extra.line !== undefined) out.line = extra.line;
  if (extra.fix !== undefined) out.fix = extra.fix;
  if (extra.user_challenge !== undefined) out.user_challenge = extra.user_challenge;
  if (extra.changes !== undefined) out.changes = extra.changes;
  if (extra.urgent !== undefined) out.urgent = extra.urgent;
  if (extra.suggested_owner !== undefined) out.suggested_owner = extra.suggested_owner;
  return out;
}
