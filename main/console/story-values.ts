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

/** Dollars as stored elsewhere in the console: to the micro-dollar. */
export function usd(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
