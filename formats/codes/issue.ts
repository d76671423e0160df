import { bounded } from '../text/bounded.ts';
import { oneLine } from '../text/one-line.ts';
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
 * `<context>: <summary> (<detail> at <path>); fix: <fix> (<CODE>)`. The detail and the
 * path are each cut at PRINTED_VALUE_MAX characters (formats/text/bounded.ts), with their length named.
 */
export function renderIssueLine(context: string, found: Issue, helpCommand: string = context): string {
  const info = RESULT_CODES[found.code];
  // Each value bounded before it is escaped: a cut never splits an escape.
  const message = oneLine(bounded(found.message));
  const where = found.path === '' ? message : `${message} at ${oneLine(bounded(found.path))}`;
  return `${context}: ${info.summary} (${where}); fix: ${fixClause(found.code, helpCommand)} (${found.code})`;
}

/**
 * A code's fix as printed: `{command}` in it becomes the command whose --help lists what
 * the user may change (`laneward crew run`), so no fix tells the user to fill in a word.
 */
export function fixClause(code: ResultCode, helpCommand: string): string {
  return RESULT_CODES[code].fix.replaceAll('{command}', helpCommand);
}
