import { describe, expect, test } from 'vitest';
import { MAX_FINAL_TEXT, type ProviderFacts } from '../formats/providers/facts.ts';
import type { PresetName } from '../formats/providers/names.ts';
import { rateLimitIn } from '../formats/providers/stream-base.ts';
import { createStreamReader } from '../formats/providers/stream-reader.ts';

const J = (value: unknown): string => JSON.stringify(value);

function read(preset: PresetName, lines: readonly string[]): ProviderFacts {
  const reader = createStreamReader(preset);
  for (const line of lines) expect(() => reader.feed(line)).not.toThrow();
  const facts = reader.facts();
  expect(reader.finished).toBe(facts.finished);
  return facts;
}

const EMPTY: ProviderFacts = { sessionId: null, finalText: null, finalTextCut: false, usage: null, costUsd: null, rateLimit: null, apiError: null, finished: false };

// Lines no reader may take for an event.
const PROSE = ['', '   ', 'Thinking about it...', '{"type":', '{not json}', '[1,2]', '"result"', '42', 'null', '\t', '  {"type":"result"'];

describe('rateLimitIn', () => {
  test.each<[string, string, number | null, number | null, number | null]>([
    ['a 429 in the text', 'API Error: 429 {"type":"error"}', null, 429, null],
    ['a 529 in the text', 'API Error: 529 overloaded_error', null, 529, null],
    ['a 429 status with no words', 'request failed', 429, 429, null],
    ['a 529 status', 'x', 529, 529, null],
    ['the words alone', 'Rate limit reached for requests', null, null, null],
    ['rate_limit_error', 'rate_limit_error: slow down', null, null, null],
    ['too many requests', 'Too Many Requests', null, null, null],
    ['overloaded', 'Overloaded', null, null, null],
    ['quota', 'You exceeded your current quota', null, null, null],
    ['retry-after in seconds', '429 Too Many Requests; retry-after: 12', null, 429, 12],
    ['retry after with s', 'rate limited, retry after 7s', null, null, 7],
    ['retry after in seconds word', 'rate limited, retry after 2.5 seconds', null, null, 2.5],
    ['retry-after in ms', '429: retry after 1500ms', null, 429, 1.5],
    ['retry_after with ms', 'rate limit {"retry_after": 250 ms}', null, null, 0.25],
    ['retry-after-ms header', '429 Too Many Requests retry-after-ms: 1500', null, 429, 1.5],
    ['retry_after_ms field', 'rate limit {"retry_after_ms": 250}', null, null, 0.25],
    ['retry after in milliseconds', 'Too many requests, retry after 2000 milliseconds', null, null, 2],
  ])('should read %s', (_name, text, status, wantStatus, wantAfter) => {
    const limit = rateLimitIn(text, status);
    expect(limit).not.toBeNull();
    expect(limit!.status).toBe(wantStatus);
    expect(limit!.retryAfterS).toBe(wantAfter);
  });

  test.each([
    ['a 500', 'API Error: 500 internal server error', null],
    ['a 400 status', 'bad request', 400],
    ['a 500 status with a 4290 in the text', 'error 4290 occurred', 500],
    ['plain text', 'the model answered', null],
  ])('should not read %s as a rate limit', (_name, text, status) => {
    expect(rateLimitIn(text, status as number | null)).toBeNull();
  });

  test('should bound the message to 500 characters', () => {
    expect(rateLimitIn(`429 ${'x'.repeat(10_000)}`)!.message).toHaveLength(500);
  });

  test.each([
    ['a retry-after too long for any number', `429 retry-after: ${'9'.repeat(400)}`],
    ['a retry-after of a year', '429 retry-after: 31536000'],
  ])('should keep the retry-after of %s finite and within a day', (_name, text) => {
    const after = rateLimitIn(text)!.retryAfterS!;
    expect(Number.isFinite(after)).toBe(true);
    expect(after).toBeGreaterThanOrEqual(0);
    expect(after).toBeLessThanOrEqual(86_400);
  });
});

const sys = J({ type: 'system', subtype: 'init', session_id: 'sys-session', tools: ['Read'] });
const assistantText = (session: string, ...texts: string[]) =>
  J({ type: 'assistant', session_id: session, message: { id: 'msg_1', role: 'assistant', content: texts.map((text) => ({ type: 'text', text })) } });
const claudeResult = (extra: Record<string, unknown> = {}) =>
  J({
    type: 'result',
    subtype: 'success',
    is_error: false,
    session_id: 's-1',
    result: 'the answer',
    total_cost_usd: 0.0123,
    usage: { input_tokens: 10, cache_creation_input_tokens: 5, cache_read_input_tokens: 100, output_tokens: 7 },
    ...extra,
  });

describe('claude-code stream', () => {
  test('should know nothing before any event', () => {
    expect(read('claude-code', [])).toEqual(EMPTY);
  });

  test('should read the session, final text, usage and cost of a clean call', () => {
    const facts = read('claude-code', [sys, assistantText('s-1', 'draft'), J({ type: 'user', session_id: 's-1', message: { content: [] } }), claudeResult()]);
    expect(facts).toEqual({
      sessionId: 's-1',
      finalText: 'the answer',
      finalTextCut: false,
      usage: { input: 115, output: 7, cachedInput: 100 },
      costUsd: 0.0123,
      rateLimit: null,
      apiError: null,
      finished: true,
    });
  });

  test('should take the session from the first event that is not system, never a later one', () => {
    const facts = read('claude-code', [
      sys,
      J({ type: 'stream_event', session_id: 'first', event: { type: 'message_start' } }),
      assistantText('second', 'x'),
      claudeResult({ session_id: 'third' }),
    ]);
    expect(facts.sessionId).toBe('first');
  });

  test('should take the system event session only until another event names one (a call killed before its first reply)', () => {
    expect(read('claude-code', [sys]).sessionId).toBe('sys-session');
    expect(read('claude-code', [sys, assistantText('later', 'x')]).sessionId).toBe('later');
  });

  test('should keep the last assistant text when the result has none', () => {
    const facts = read('claude-code', [assistantText('s', 'one'), assistantText('s', 'two ', 'parts'), J({ type: 'result', subtype: 'success', session_id: 's' })]);
    expect(facts).toMatchObject({ finalText: 'two parts', finished: true, usage: null, costUsd: null });
  });

  test('should not replace the text with an assistant message that has no text block', () => {
    const facts = read('claude-code', [assistantText('s', 'kept'), J({ type: 'assistant', message: { content: [{ type: 'tool_use', id: 't', name: 'Read' }] } })]);
    expect(facts).toMatchObject({ finalText: 'kept', finished: false });
  });

  test('should report a 429 error result as a rate limit with its retry-after', () => {
    const facts = read('claude-code', [sys, J({ type: 'result', subtype: 'success', is_error: true, session_id: 's', result: 'API Error: 429 rate_limit_error retry-after: 20' })]);
    expect(facts).toMatchObject({ finished: true, apiError: null, finalText: null, rateLimit: { status: 429, retryAfterS: 20 } });
  });

  test('should take the typed api_error_status of an error result', () => {
    const facts = read('claude-code', [J({ type: 'result', is_error: true, api_error_status: 529, result: 'something went wrong' })]);
    expect(facts.rateLimit).toMatchObject({ status: 529, retryAfterS: null });
  });

  test('should report a 500 error result as an API error, not a rate limit', () => {
    const facts = read('claude-code', [J({ type: 'result', is_error: true, result: 'API Error: 500 internal' })]);
    expect(facts).toMatchObject({ rateLimit: null, apiError: 'API Error: 500 internal', finalText: null, finished: true });
  });

  test('should report an error subtype without text by its subtype', () => {
    const facts = read('claude-code', [J({ type: 'result', subtype: 'error_max_turns' })]);
    expect(facts).toMatchObject({ apiError: 'error_max_turns', finished: true });
  });

  test('should ignore prose and malformed lines', () => {
    const facts = read('claude-code', [...PROSE, assistantText('s', 'ok'), ...PROSE]);
    expect(facts).toEqual({ ...EMPTY, sessionId: 's', finalText: 'ok' });
  });

  test('should bound the final text and say it was cut', () => {
    const facts = read('claude-code', [claudeResult({ result: 'a'.repeat(MAX_FINAL_TEXT + 10) })]);
    expect(facts.finalText).toHaveLength(MAX_FINAL_TEXT);
    expect(facts.finalTextCut).toBe(true);
    const again = read('claude-code', [claudeResult({ result: 'b'.repeat(MAX_FINAL_TEXT + 10) }), assistantText('s', 'short')]);
    expect(again).toMatchObject({ finalText: 'short', finalTextCut: false });
  });

  test('should count hostile figures as nothing: huge, negative, fractional, strings, arrays', () => {
    const line =
      '{"type":"result","session_id":"s","result":"r","total_cost_usd":1e400,' +
      '"usage":{"input_tokens":-5,"cache_creation_input_tokens":1e400,"cache_read_input_tokens":1.5,"output_tokens":"7"}}';
    expect(read('claude-code', [line])).toMatchObject({ usage: { input: 0, output: 0, cachedInput: 0 }, costUsd: null, finished: true });
    expect(read('claude-code', [claudeResult({ total_cost_usd: -1 })]).costUsd).toBeNull();
    expect(read('claude-code', [claudeResult({ total_cost_usd: '0.5' })]).costUsd).toBeNull();
    expect(read('claude-code', [claudeResult({ usage: [1, 2, 3] })]).usage).toBeNull();
  });

  test('should keep usage sums safe integers however large each figure', () => {
    const big = Number.MAX_SAFE_INTEGER;
    const facts = read('claude-code', [claudeResult({ usage: { input_tokens: big, cache_creation_input_tokens: big, cache_read_input_tokens: big, output_tokens: big } })]);
    expect(Number.isSafeInteger(facts.usage!.input)).toBe(true);
    expect(facts.usage!.output).toBe(big);
  });

  test('should ignore arrays, wrong types and __proto__ keys', () => {
    const facts = read('claude-code', [
      '{"__proto__":{"type":"result","session_id":"evil","result":"evil"}}',
      '{"type":"assistant","__proto__":{"session_id":"evil2"},"message":{"content":[{"__proto__":{"type":"text","text":"evil3"}}]}}',
      J({ type: ['result'], session_id: 7 }),
      J({ type: 'assistant', session_id: '', message: { content: 'text' } }),
      J({ type: 'assistant', message: [{ content: [{ type: 'text', text: 'no' }] }] }),
      J({ type: 'assistant', message: { content: [null, 1, 'x', [{ type: 'text', text: 'no' }], { type: 'text', text: 5 }] } }),
    ]);
    expect(facts).toEqual(EMPTY);
    expect(({} as Record<string, unknown>).session_id).toBeUndefined();
    expect(({} as Record<string, unknown>).type).toBeUndefined();
  });
});

describe('codex stream', () => {
  const thread = J({ type: 'thread.started', thread_id: 'th-1' });
  const msg = (text: string) => J({ type: 'item.completed', item: { id: 'i', type: 'agent_message', text } });
  const turn = (input: number, cached: number, output: number) => J({ type: 'turn.completed', usage: { input_tokens: input, cached_input_tokens: cached, output_tokens: output } });

  test('should read the thread, the last agent message and usage summed over turns', () => {
    const facts = read('codex', [
      thread,
      J({ type: 'turn.started' }),
      J({ type: 'item.completed', item: { id: 'r', type: 'reasoning', text: 'thinking' } }),
      msg('first'),
      turn(100, 40, 10),
      J({ type: 'thread.started', thread_id: 'th-2' }),
      msg('second'),
      turn(50, 10, 5),
    ]);
    expect(facts).toEqual({ ...EMPTY, sessionId: 'th-1', finalText: 'second', usage: { input: 150, output: 15, cachedInput: 50 }, finished: true });
  });

  test('should report a turn.failed rate limit and an error event', () => {
    const failed = read('codex', [thread, J({ type: 'turn.failed', error: { message: 'stream error: 429 Too Many Requests, retry after 3s' } })]);
    expect(failed).toMatchObject({ rateLimit: { status: 429, retryAfterS: 3 }, apiError: null, finished: false });
    const errored = read('codex', [J({ type: 'error', message: 'unexpected status 500 Internal Server Error' }), J({ type: 'error', message: 'second' })]);
    expect(errored).toMatchObject({ rateLimit: null, apiError: 'unexpected status 500 Internal Server Error' });
    expect(read('codex', [J({ type: 'turn.failed' })]).apiError).toBe('turn failed');
  });

  test('should keep the first rate limit', () => {
    const facts = read('codex', [J({ type: 'error', message: '429 retry after 5s' }), J({ type: 'error', message: '529 retry after 9s' })]);
    expect(facts.rateLimit).toMatchObject({ status: 429, retryAfterS: 5 });
  });

  test('should ignore prose, malformed lines and hostile figures', () => {
    const facts = read('codex', [
      ...PROSE,
      '{"type":"turn.completed","usage":{"input_tokens":1e400,"cached_input_tokens":-3,"output_tokens":[4]}}',
      '{"__proto__":{"type":"thread.started","thread_id":"evil"}}',
      J({ type: 'item.completed', item: [{ type: 'agent_message', text: 'no' }] }),
      J({ type: 'item.completed', item: { type: 'agent_message', text: 3 } }),
      J({ type: 'thread.started', thread_id: 12 }),
    ]);
    expect(facts).toEqual({ ...EMPTY, usage: { input: 0, output: 0, cachedInput: 0 }, finished: true });
  });

  test('should keep usage summed over turns a safe integer', () => {
    const big = Number.MAX_SAFE_INTEGER;
    const facts = read('codex', [turn(big, big, big), turn(big, big, big)]);
    expect(facts.usage).toEqual({ input: big, output: big, cachedInput: big });
  });

  test('should bound the final text', () => {
    const facts = read('codex', [msg('z'.repeat(MAX_FINAL_TEXT * 2))]);
    expect(facts.finalText).toHaveLength(MAX_FINAL_TEXT);
    expect(facts.finalTextCut).toBe(true);
  });
});

describe('gemini-cli stream', () => {
  const init = J({ type: 'init', session_id: 'g-1', model: 'gemini-2.5-pro' });
  const say = (content: string, role = 'assistant') => J({ type: 'message', role, content, delta: true });

  test('should read the session, the reply since the last tool call and the stats', () => {
    const facts = read('gemini-cli', [
      init,
      say('prompt', 'user'),
      say('Let me '),
      say('look.'),
      J({ type: 'tool_use', tool_name: 'read_file', tool_id: 't1' }),
      J({ type: 'tool_result', tool_id: 't1', status: 'success' }),
      say('The '),
      say('answer.'),
      J({ type: 'result', status: 'success', stats: { input_tokens: 30, output_tokens: 4, cached: 10 } }),
    ]);
    expect(facts).toEqual({ ...EMPTY, sessionId: 'g-1', finalText: 'The answer.', usage: { input: 30, output: 4, cachedInput: 10 }, finished: true });
  });

  test('should report an error event with a 429 status and an error result', () => {
    const limited = read('gemini-cli', [init, J({ type: 'error', status: 429, message: 'Resource exhausted' })]);
    expect(limited).toMatchObject({ rateLimit: { status: 429, retryAfterS: null }, finished: false });
    const nested = read('gemini-cli', [J({ type: 'error', error: { message: 'quota exceeded, retry after 60s' } })]);
    expect(nested.rateLimit).toMatchObject({ status: null, retryAfterS: 60 });
    const failed = read('gemini-cli', [J({ type: 'result', status: 'error', error: { message: 'Internal error 500' } })]);
    expect(failed).toMatchObject({ apiError: 'Internal error 500', rateLimit: null, finished: true });
  });

  test('should bound appended deltas', () => {
    const half = 'q'.repeat(MAX_FINAL_TEXT / 2 + 1);
    const facts = read('gemini-cli', [say(half), say(half), say('more')]);
    expect(facts.finalText).toHaveLength(MAX_FINAL_TEXT);
    expect(facts.finalTextCut).toBe(true);
  });

  test('should ignore prose, malformed lines and hostile figures', () => {
    const facts = read('gemini-cli', [
      ...PROSE,
      '{"__proto__":{"type":"init","session_id":"evil"}}',
      J({ type: 'message', role: 'assistant', content: ['x'] }),
      J({ type: 'init', session_id: '' }),
      '{"type":"result","stats":{"input_tokens":-1,"output_tokens":1e400,"cached_tokens":2.5}}',
    ]);
    expect(facts).toEqual({ ...EMPTY, usage: { input: 0, output: 0, cachedInput: 0 }, finished: true });
  });
});

describe('session ids go back into argv', () => {
  test.each(['--dangerously-skip-permissions', '-x', '../../etc', 'a b', '', 'x'.repeat(201)])('should not take %j as a session id', (id) => {
    expect(createStreamReaderFor('claude-code', [JSON.stringify({ type: 'assistant', session_id: id, message: { content: [] } })]).sessionId).toBeNull();
    expect(createStreamReaderFor('codex', [JSON.stringify({ type: 'thread.started', thread_id: id })]).sessionId).toBeNull();
    expect(createStreamReaderFor('gemini-cli', [JSON.stringify({ type: 'init', session_id: id })]).sessionId).toBeNull();
  });
});

function createStreamReaderFor(preset: 'claude-code' | 'codex' | 'gemini-cli', lines: readonly string[]) {
  const reader = createStreamReader(preset);
  for (const line of lines) reader.feed(line);
  return reader.facts();
}
