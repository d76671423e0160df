import { SEVERITIES } from '../schemas/findings.ts';

/** A finding's severity, in the spelling every artifact uses. */
export type Severity = (typeof SEVERITIES)[number];

/** What accepting a user challenge changes. */
export type Changes = 'scope' | 'cost' | 'direction';
export const CHANGES: readonly Changes[] = ['scope', 'cost', 'direction'];

/** The severity list as messages and prompts spell it. */
export const SEVERITY_LIST = 'Critical, High, Medium, Low or Informational';

const ALIASES: ReadonlyMap<string, Severity> = new Map<string, Severity>([
  ['critical', 'Critical'],
  ['crit', 'Critical'],
  ['blocker', 'Critical'],
  ['high', 'High'],
  ['hi', 'High'],
  ['major', 'High'],
  ['medium', 'Medium'],
  ['med', 'Medium'],
  ['moderate', 'Medium'],
  ['low', 'Low'],
  ['minor', 'Low'],
  ['informational', 'Informational'],
  ['info', 'Informational'],
  ['note', 'Informational'],
  ['nit', 'Informational'],
]);

const EDGES = /^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu;
/** No alias with its punctuation is longer; a longer text is never a severity. */
const MAX_SEVERITY_TEXT = 64;

/**
 * The severity a reviewer meant: the five names and their aliases, case-insensitive, with
 * surrounding punctuation and marks (`**High**`, `(crit)`, `nit:`) ignored. Anything else
 * is null: a severity is never guessed.
 */
export function normaliseSeverity(raw: string): Severity | null {
  // Hint: the length bound keeps the edge-trimming regex linear on hostile input.
  if (raw.length > MAX_SEVERITY_TEXT) return null;
  return ALIASES.get(raw.replace(EDGES, '').toLowerCase()) ?? null;
}

/** A short, quoted, single-line excerpt of input for a message. */
export function quote(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
}
