import { MAX_TIMER_MS } from '../supervision/limits.ts';

/** Milliseconds per unit a duration may name. */
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;
export type DurationUnit = keyof typeof UNIT_MS;

const DURATION = /^(\d{1,10}(?:\.\d{1,3})?)(ms|s|m|h)?$/;

/**
 * A duration such as `90s`, `5m`, `1h`, `500ms` or `1.5m`, in whole milliseconds; a bare
 * number is in `bare` units (minutes for --deadline, as it always was). Null when it is
 * not one, or when it rounds to under 1 ms or over {@link MAX_TIMER_MS}.
 */
export function parseDuration(text: string, bare: DurationUnit): number | null {
  const m = DURATION.exec(text);
  if (m === null) return null;
  const ms = Math.round(Number(m[1]) * UNIT_MS[(m[2] as DurationUnit | undefined) ?? bare]);
  return ms >= 1 && ms <= MAX_TIMER_MS ? ms : null;
}
