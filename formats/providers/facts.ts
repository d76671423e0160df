/**
 * What a provider's own stream said about its call, read by the supervisor line by line
 * (never its prose as progress): plain data, carried in the outcome across threads.
 */
export interface ProviderFacts {
  /** The provider's session (claude's session_id, codex's thread_id, gemini's session_id). */
  readonly sessionId: string | null;
  /** The last assistant message's text, bounded ({@link MAX_FINAL_TEXT} UTF-16 units). */
  readonly finalText: string | null;
  /** True when the final text was cut at the bound. */
  readonly finalTextCut: boolean;
  readonly usage: TokenUsage | null;
  /** What the provider itself says the call cost (claude's total_cost_usd); null when it says nothing. */
  readonly costUsd: number | null;
  /** A rate limit or overload the stream reported (HTTP 429 or 529). */
  readonly rateLimit: RateLimit | null;
  /** An API error the stream reported that is not a rate limit (a 500, a 400). */
  readonly apiError: string | null;
  /** The provider's terminal event (result, turn.completed) was seen. */
  readonly finished: boolean;
}

export interface TokenUsage {
  readonly input: number;
  readonly output: number;
  /** Input tokens served from a cache, where the stream tells them apart (part of or beside input, as the provider counts them). */
  readonly cachedInput: number;
}

export interface RateLimit {
  /** The HTTP status the CLI reported (429, 529), or null when it said "rate limit" without one. */
  readonly status: number | null;
  /** Seconds to wait, when the provider gave a retry-after. */
  readonly retryAfterS: number | null;
  readonly message: string;
}

export const MAX_FINAL_TEXT = 1024 * 1024;

/** One stream reader per supervision; `feed` takes one complete stdout line and never throws. */
export interface StreamReader {
  feed(line: string): void;
  facts(): ProviderFacts;
  /** The terminal event was seen. */
  readonly finished: boolean;
}
