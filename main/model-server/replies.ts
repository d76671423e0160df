/**
 * What the fake model server answers, as a small union built by the helpers below. A reply
 * is API-neutral: each API's writer renders it in that API's own stream shape.
 */

/** Token counts reported with a reply; fixed per reply so tests can compare costs. */
export interface Usage {
  readonly inputTokens: number;
  readonly outputTokens: number;
}

/**
 * Every reply reports these unless it says otherwise: 1000 tokens in, 50 out, the same for
 * every turn of every API, so a conversation's totals are a multiple of them.
 */
export const DEFAULT_USAGE: Usage = { inputTokens: 1000, outputTokens: 50 };

export type Block =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'tool'; readonly name: string; readonly input: ToolInput };

/**
 * A tool's arguments: an object, or a string for a freeform tool (the Responses API's
 * `custom` tools, such as codex's `apply_patch`), which the other APIs get as `{ input }`.
 */
export type ToolInput = Readonly<Record<string, unknown>> | string;

export function inputObject(input: ToolInput): Readonly<Record<string, unknown>> {
  return typeof input === 'string' ? { input } : input;
}

export interface StreamOptions {
  /** Silence between two deltas of one block (slow tokens). */
  readonly chunkDelayMs?: number;
  /** How many deltas a text block is cut into (default: about one per word, at most 8). */
  readonly chunks?: number;
  /** Silence before each content block starts: a slow but structurally live stream. */
  readonly blockDelayMs?: number;
  readonly usage?: Usage;
}

export type Reply =
  | { readonly kind: 'message'; readonly blocks: readonly Block[]; readonly options: StreamOptions }
  | { readonly kind: 'stall'; readonly afterChunks: number; readonly text: string }
  | { readonly kind: 'pause'; readonly ms: number; readonly then: Reply }
  | {
      readonly kind: 'error';
      readonly status: number;
      readonly retryAfterS?: number;
      /** Replaces the API's own error JSON when given. */
      readonly body?: string;
    };

/** A streamed text answer; the turn ends (end_turn / completed / STOP). */
export function text(s: string, options: StreamOptions = {}): Reply {
  return { kind: 'message', blocks: [{ type: 'text', text: s }], options };
}

/**
 * One call of the CLI's own tool, by its name in that CLI's tool list (claude `Write`,
 * codex `exec_command` or `apply_patch`, gemini `write_file`...), so the real CLI runs it in its cwd.
 */
export function toolCall(name: string, input: ToolInput, options: StreamOptions = {}): Reply {
  return { kind: 'message', blocks: [{ type: 'tool', name, input }], options };
}

/** Several blocks in one assistant turn, e.g. a sentence and then a tool call. */
export function blocks(list: readonly Block[], options: StreamOptions = {}): Reply {
  return { kind: 'message', blocks: list, options };
}

/**
 * Starts a text message, sends `afterChunks` deltas of `text`, then nothing more: the
 * connection stays open until the client gives up or the server closes.
 */
export function stall({ afterChunks = 0, text: partial = 'Thinking about it' }: { afterChunks?: number; text?: string } = {}): Reply {
  return { kind: 'stall', afterChunks, text: partial };
}

/** Silence before the first byte (headers included), then the reply. */
export function pauseThen(ms: number, reply: Reply): Reply {
  return { kind: 'pause', ms, then: reply };
}

/** An HTTP error in the API's own error JSON (429 rate limit, 500, 529 overloaded...). */
export function httpError(status: number, { retryAfterS, body }: { retryAfterS?: number; body?: string } = {}): Reply {
  return {
    kind: 'error',
    status,
    ...(retryAfterS === undefined ? {} : { retryAfterS }),
    ...(body === undefined ? {} : { body }),
  };
}

/** Cuts text into at most `count` pieces on word boundaries (the deltas of one block). */
export function chunksOf(s: string, count?: number): string[] {
  const words = s.match(/\S+\s*|\s+/g) ?? [];
  if (words.length === 0) return [s];
  const n = Math.max(1, Math.min(count ?? 8, words.length));
  const per = Math.ceil(words.length / n);
  const out: string[] = [];
  for (let i = 0; i < words.length; i += per) out.push(words.slice(i, i + per).join(''));
  return out;
}
