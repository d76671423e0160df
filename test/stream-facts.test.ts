import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { streamEnd, streamFacts } from '../main/providers/stream-facts.ts';
import { tempRoot } from './helpers/tmp.ts';

// What a stream file a CLI wrote (its writer gone) tells of its call's end: a later run
// binds the reply of one that reached its terminal event, fails typed one that ended in
// an error, and calls unknown only one that says nothing conclusive.

const root = tempRoot('stream-facts');
const init = { type: 'system', subtype: 'init', session_id: 'sess-1' };
const reply = { type: 'assistant', session_id: 'sess-1', message: { id: 'm1', content: [{ type: 'text', text: 'the review' }] } };
const result = (extra: Record<string, unknown>) => ({ type: 'result', subtype: 'success', is_error: false, session_id: 'sess-1', result: 'the review', total_cost_usd: 0.01, ...extra });

describe('streamFacts and streamEnd', () => {
  test.each([
    ['a stream that reached its result', [init, reply, result({})], 'done', 'the review'],
    ['a stream cut before its result', [init, reply], null, 'the review'],
    ['a stream whose result is an API error', [init, result({ is_error: true, result: 'API Error: 500 boom', api_error_status: 500 })], 'CHILD_FAILED', null],
    ['a stream whose result is a rate limit', [init, result({ is_error: true, result: 'API Error: 429 {"type":"rate_limit_error"}', api_error_status: 429 })], 'PROVIDER_RATE_LIMITED', null],
    ['an empty stream', [], null, null],
  ] as const)('should read %s as %s', (name, lines, end, text) => {
    const file = join(root, `${name.replace(/\W+/g, '-')}.stdout`);
    writeFileSync(file, lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
    const facts = streamFacts('claude-code', file);
    expect(streamEnd(facts)).toBe(end);
    if (end === 'done') expect(facts).toMatchObject({ sessionId: 'sess-1', finalText: text, costUsd: 0.01, finished: true });
    if (end === null && text !== null) expect(facts?.finalText).toBe(text);
  });

  test('should give no facts for a stream file that does not exist', () => {
    expect(streamFacts('codex', join(root, 'missing.stdout'))).toBe(null);
    expect(streamEnd(null)).toBe(null);
  });
});
