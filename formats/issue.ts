import { RESULT_CODES, type ResultCode } from './codes.ts';

/** One problem found in an input: which code, where, and the specific detail. */
export interface Issue {
  readonly code: ResultCode;
  /** Where it is: `run.json.phases.eng.outside`, `findings.jsonl:12.severity`. */
  readonly path: string;
  /** The specific message (the line's detail). */
  readonly message: string;
}

export function issue(code: ResultCode, path: string, message: string): Issue {
  return { code, path, message };
}

/**
 * The one line format every error is printed in:
 * `<context>: <summary> (<detail> at <path>); fix: <fix> (<CODE>)`.
 */
export function renderIssueLine(context: string, found: Issue): string {
  const info = RESULT_CODES[found.code];
  const message = oneLine(found.message);
  const where = found.path === '' ? message : `${message} at ${oneLine(found.path)}`;
  return `${context}: ${info.summary} (${where}); fix: ${info.fix} (${found.code})`;
}

const CONTROL = /[\u0000-\u001f\u007f\u2028\u2029]/g;

/**
 * Escapes line breaks and other control characters as JSON does (`\n`, `\u0007`), so a
 * value taken from an input (a run id, a key, a path) can never start a line of its own
 * in output that parents grep.
 */
export function oneLine(text: string): string {
  return text.replace(CONTROL, (c) => SHORT[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const SHORT: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
