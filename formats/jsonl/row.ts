import { LINE_OVERLONG, type LineProblem } from './lines.ts';

/** A JSONL line read as one row: the object, or why it is not one. */
export type RowParse = { readonly row: Record<string, unknown> } | { readonly malformed: string };

/**
 * Parses one JSONL line. Messages are fixed strings, never the engine's: Node and Deno
 * word JSON.parse errors differently, and the validator's output must not depend on it.
 */
export function parseJsonlRow(text: string | null, problem: LineProblem = LINE_OVERLONG): RowParse {
  if (text === null) return { malformed: problem };
  if (text.length === 0) return { malformed: 'blank line' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { malformed: text.trim() === '' ? 'blank line' : 'line is not valid JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { malformed: 'line is not a JSON object' };
  }
  return { row: value as Record<string, unknown> };
}

/**
 * The hot-path form of {@link parseJsonlRow}: the row object itself, or the malformed
 * reason as a string. Hint: no wrapper object per row, so a million valid rows allocate
 * nothing beyond what JSON.parse builds.
 */
export function parseJsonlObject(text: string | null, problem: LineProblem = LINE_OVERLONG): Record<string, unknown> | string {
  if (text === null) return problem;
  if (text.length === 0) return 'blank line';
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return text.trim() === '' ? 'blank line' : 'line is not valid JSON';
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'line is not a JSON object';
  return value as Record<string, unknown>;
}
