import { parseJsonlObject } from '../jsonl/row.ts';
import { MAX_FINAL_TEXT, type ProviderFacts, type RateLimit, type StreamReader, type TokenUsage } from './facts.ts';

/** The object a stream line holds, or undefined for prose and anything else. */
export function streamEvent(line: string): Record<string, unknown> | undefined {
  if (!line.trimStart().startsWith('{')) return undefined;
  const parsed = parseJsonlObject(line);
  return typeof parsed === 'string' ? undefined : parsed;
}

export const objectAt = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;

export const stringAt = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

// A session id goes back into the CLI's argv (--resume ID): only a plain token is taken,
// never one a stream could make read as a flag or a path.
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/;

/** A session id the stream gave, if it is a plain token; else undefined. */
export const sessionAt = (value: unknown): string | undefined => {
  const id = stringAt(value);
  return id !== undefined && SESSION_ID.test(id) ? id : undefined;
};

/** A token count: a non-negative safe integer, else 0 (a stream's odd figure never poisons a sum). */
export const tokens = (value: unknown): number => (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0);

/** A sum of token counts, held at the largest safe integer (huge figures never make an unsafe total). */
export const sumTokens = (...counts: number[]): number => Math.min(Number.MAX_SAFE_INTEGER, counts.reduce((a, b) => a + b, 0));

/** The longest pause a stream's retry-after may ask for: a hostile or absurd figure never parks a provider for good. */
export const MAX_RETRY_AFTER_S = 86_400;

const RATE_STATUS = /\b(429|529)\b/;
const RATE_WORDS = /rate.?limit|too many requests|overloaded|quota/i;
// `retry-after-ms` (a header some APIs send) names milliseconds before its number.
const RETRY_AFTER = /retry[-_ ]?after([-_ ]?ms\b)?\D{0,16}?(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|sec|seconds?)?/i;

/**
 * A rate limit or overload named in an error a CLI reported, or null. CLIs word these
 * errors each their own way and none gives a typed field for all of them, so the status
 * (429, 529) or the words are looked for; the retry-after, when the text carries one.
 */
export function rateLimitIn(text: string, status: number | null = null): RateLimit | null {
  const found = status === 429 || status === 529 ? status : Number(RATE_STATUS.exec(text)?.[1] ?? NaN);
  const statusOf = Number.isNaN(found) ? null : found;
  if (statusOf === null && !RATE_WORDS.test(text)) return null;
  const after = RETRY_AFTER.exec(text);
  let retryAfterS: number | null = null;
  if (after !== null) {
    const n = Number(after[2]);
    const ms = after[1] !== undefined || /^m/i.test(after[3] ?? '');
    retryAfterS = Math.min(MAX_RETRY_AFTER_S, ms ? n / 1000 : n);
  }
  return { status: statusOf, retryAfterS, message: text.slice(0, 500) };
}

/** The facts every reader keeps; each preset's reader says which events set them. */
export class FactsBuilder {
  sessionId: string | null = null;
  private text: string | null = null;
  private cut = false;
  usage: TokenUsage | null = null;
  costUsd: number | null = null;
  rateLimit: RateLimit | null = null;
  apiError: string | null = null;
  finished = false;

  /** The final text so far is replaced by `text` (a new assistant message began). */
  setText(text: string): void {
    this.cut = text.length > MAX_FINAL_TEXT;
    this.text = this.cut ? text.slice(0, MAX_FINAL_TEXT) : text;
  }

  /** Appends a delta to the current assistant message's text. */
  appendText(delta: string): void {
    const now = this.text ?? '';
    if (now.length + delta.length > MAX_FINAL_TEXT) {
      this.text = (now + delta).slice(0, MAX_FINAL_TEXT);
      this.cut = true;
    } else this.text = now + delta;
  }

  /** An error the stream reported: a rate limit when it reads as one, else an API error. */
  error(text: string, status: number | null = null): void {
    const limited = rateLimitIn(text, status);
    if (limited !== null) this.rateLimit ??= limited;
    else this.apiError ??= text.slice(0, 500);
  }

  facts(): ProviderFacts {
    return {
      sessionId: this.sessionId,
      finalText: this.text,
      finalTextCut: this.cut,
      usage: this.usage,
      costUsd: this.costUsd,
      rateLimit: this.rateLimit,
      apiError: this.apiError,
      finished: this.finished,
    };
  }
}

/**
 * A reader built from one function per event: lines that are not JSON objects are prose.
 * `skip` passes over lines the reader has no use for before they are parsed (a stream's
 * many deltas): only a cost, since a skipped line would have changed nothing.
 */
export function readerOf(onEvent: (event: Record<string, unknown>, facts: FactsBuilder) => void, skip: (line: string) => boolean = () => false): StreamReader {
  const facts = new FactsBuilder();
  return {
    feed(line) {
      if (skip(line)) return;
      const event = streamEvent(line);
      if (event !== undefined) onEvent(event, facts);
    },
    facts: () => facts.facts(),
    get finished() {
      return facts.finished;
    },
  };
}
