import type { ResultCode } from './codes.ts';

/**
 * The one error type laneward throws. Errors cross worker and process boundaries, so
 * callers test them with {@link isLanewardError} and match `code`, never the message.
 */
export class LanewardError extends Error {
  readonly code: ResultCode;
  readonly path: string;

  constructor(code: ResultCode, message: string, options: { path?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'LanewardError';
    this.code = code;
    this.path = options.path ?? '';
  }
}

export function isLanewardError(value: unknown): value is LanewardError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { name?: unknown }).name === 'LanewardError' &&
    typeof (value as { code?: unknown }).code === 'string'
  );
}

/** Converts any caught value to an Error before it is stored or printed. */
export function toError(value: unknown): Error {
  if (value instanceof Error) return value;
  return new Error(typeof value === 'string' ? value : JSON.stringify(value));
}

/** A Node system error code (`ENOENT`, `EISDIR`...), if the value carries one. */
export function errnoCode(value: unknown): string | undefined {
  const code = (value as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * A message of several lines (a native library's) as one: each line break, with the
 * indentation around it, becomes one space, so an error stays the one line it is printed on.
 */
export function oneLineMessage(value: unknown): string {
  return toError(value).message.replace(/\s*[\n\r\u000b\u000c\u0085\u2028\u2029]+\s*/g, ' ').trim();
}
