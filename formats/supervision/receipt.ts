import * as v from 'valibot';
import { parseDuration } from '../text/duration.ts';
import { MAX_TIMER_MS } from './limits.ts';

/** A receipt is one short line; anything longer is not one of ours. */
export const MAX_RECEIPT_BYTES = 4096;

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z$/;

/** A canonical UTC ISO time: `2026-11-29T23:04:21Z` or with milliseconds, and a real date. */
export function isCanonicalUtc(text: string): boolean {
  if (!ISO.test(text)) return false;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) return false;
  const canonical = new Date(ms).toISOString();
  return canonical === text || canonical === text.replace('Z', '.000Z');
}

const isoTime = v.pipe(v.string(), v.check(isCanonicalUtc, 'Expected a canonical UTC ISO time'));
const budget = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(MAX_TIMER_MS));

export const receiptV1Schema = v.strictObject({
  version: v.literal(1),
  startedAt: isoTime,
  deadlineAt: isoTime,
  budgetMs: budget,
});

/** laneward's extension: a probe budget makes the receipt version 2 with one more key. */
export const receiptV2Schema = v.strictObject({
  version: v.literal(2),
  startedAt: isoTime,
  deadlineAt: isoTime,
  budgetMs: budget,
  maxProbes: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1_000_000)),
});

export type Receipt = v.InferOutput<typeof receiptV1Schema> | v.InferOutput<typeof receiptV2Schema>;

/**
 * SECONDS as the guard takes it: a decimal with at most three fractional digits, from
 * 1 ms to {@link MAX_TIMER_MS}. Returns milliseconds, or undefined when it is not one.
 */
export function parseSeconds(text: string): number | undefined {
  // A bare number only: the guard's SECONDS takes no unit.
  return /^\d+(?:\.\d+)?$/.test(text) ? (parseDuration(text, 's') ?? undefined) : undefined;
}

/** Builds a receipt; an earlier caller deadline only moves deadlineAt, never budgetMs. */
export function makeReceipt(now: number, budgetMs: number, earlierMs: number | undefined, maxProbes: number | undefined): Receipt {
  const deadline = earlierMs === undefined ? now + budgetMs : Math.min(now + budgetMs, earlierMs);
  const base = { startedAt: new Date(now).toISOString(), deadlineAt: new Date(deadline).toISOString(), budgetMs };
  return maxProbes === undefined ? { version: 1, ...base } : { version: 2, ...base, maxProbes };
}

/** Parses and checks a receipt's text; returns the reason it is refused, or the receipt. */
export function parseReceipt(text: string): Receipt | string {
  const line = text.endsWith('\n') ? text.slice(0, -1) : text;
  if (line.includes('\n')) return 'receipt is not one line';
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return 'receipt is not JSON';
  }
  const version = (value as { version?: unknown } | null)?.version;
  const schema = version === 2 ? receiptV2Schema : receiptV1Schema;
  const result = v.safeParse(schema, value);
  if (!result.success) {
    const first = result.issues[0];
    const where = first.path?.map((item) => String(item.key)).join('.') ?? 'receipt';
    return `${where}: ${first.message}`;
  }
  const receipt = result.output as Receipt;
  if (Date.parse(receipt.deadlineAt) > Date.parse(receipt.startedAt) + receipt.budgetMs) {
    return 'deadlineAt is later than startedAt + budgetMs';
  }
  return receipt;
}

/** A guard bookkeeping line's payload; the guard prints it as `QA_DEADLINE <json>`. */
export interface GuardEvent {
  readonly event: 'start' | 'status' | 'expired' | 'started' | 'finished' | 'error';
  readonly observedAt: string;
  readonly deadlineAt: string | null;
  readonly remainingMs: number;
  readonly expired: boolean;
  readonly [extra: string]: unknown;
}

/** `QA_DEADLINE <json>`; `run` adds a newline before it so it never shares a line with child output. */
export function guardLine(event: GuardEvent, ownLine: boolean): string {
  return `${ownLine ? '\n' : ''}QA_DEADLINE ${JSON.stringify(event)}\n`;
}
