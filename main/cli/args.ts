import { parseArgs, type ParseArgsConfig } from 'node:util';
import { LanewardError } from '../../formats/codes/error.ts';
import { parseDuration } from '../../formats/text/duration.ts';

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * Parses one command's argv strictly: an unknown option, a missing value or a stray
 * positional is a usage error (exit 2), never a guess.
 */
export function parseCommand<const O extends Options>(args: readonly string[], options: O, allowPositionals = true) {
  try {
    return parseArgs({ args: [...args], options, allowPositionals, strict: true });
  } catch (error) {
    // One line: a value starting with '-' gets node's three-line message, whose last line
    // says how to give one (--opt=-x).
    const message = error instanceof Error ? error.message.split('\n').join(' ') : String(error);
    throw new LanewardError('USAGE', message);
  }
}

/** A whole number option within bounds, or a usage error naming what was received. */
export function intOption(name: string, raw: string | undefined, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new LanewardError('USAGE', `expected --${name} to be a whole number from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  }
  return value;
}

/**
 * A duration option in ms: `90s`, `5m`, `1h`, `500ms`; a bare number is minutes (what
 * --deadline always meant). Anything else is a USAGE error naming the option.
 */
export function minutesOption(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const ms = parseDuration(raw, 'm');
  if (ms === null) throw usage(`expected --${name} to be a duration such as 90s, 5m, 1h or 500ms (a bare number is minutes), at most 24 days, got ${JSON.stringify(raw)}`);
  return ms;
}

export function usage(message: string): LanewardError {
  return new LanewardError('USAGE', message);
}
