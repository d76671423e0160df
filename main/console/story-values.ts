import { oneLine } from '../../formats/text/one-line.ts';

// Journal and file values are read as `unknown`: a record written by an older or newer
// laneward may lack a field or hold another type, and a story shows what is there.

/** A detail as a lane's story shows it: one line, bounded. */
export const DETAIL_CHARS = 240;

export function boundedLine(text: string): string {
  const line = oneLine(text);
  return line.length <= DETAIL_CHARS ? line : `${line.slice(0, DETAIL_CHARS - 1)}…`;
}

export function stringOr<T>(value: unknown, fallback: T): string | T {
  return typeof value === 'string' ? value : fallback;
}

export function numberOr<T>(value: unknown, fallback: T): number | T {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

/**
 * A call's kept stderr lines: the strings of an array, each escaped again and bounded (a
 * journal of another laneward may hold anything); [] for anything else.
 */
export function linesOr(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((line): line is string => typeof line === 'string').slice(-STDERR_LINES).map(boundedLine) : [];
}

/** The stderr lines a story shows of one call, at most (as many as a supervisor keeps). */
const STDERR_LINES = 5;

/** Dollars as stored elsewhere in the console: to the micro-dollar. */
export function usd(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
