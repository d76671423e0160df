import { afterEach, describe, expect, test, vi } from 'vitest';
import { createTracker, TRACKER_KINDS, type TrackerKind, type Verdict } from '../workers/supervise/trackers/tracker.ts';

const I: Verdict = { kind: 'ignore' };
const T: Verdict = { kind: 'terminal' };
const M = (count = 1): Verdict => ({ kind: 'mark', count });
const X = (reason: string): Verdict => ({ kind: 'invalid', reason });

/** One table row: lines fed in order, the verdict for each, and the final running total. */
type Row = [name: string, lines: string[], verdicts: Verdict[], marks: number];

function feedAll(kind: TrackerKind, lines: readonly string[]): { verdicts: Verdict[]; marks: number } {
  const tracker = createTracker(kind);
  const verdicts = lines.map((line) => tracker.feed(line));
  return { verdicts, marks: tracker.marks };
}

function expectRow(kind: TrackerKind, [, lines, verdicts, marks]: Row): void {
  expect(verdicts).toHaveLength(lines.length); // guards the table itself
  const got = feedAll(kind, lines);
  expect(got.verdicts).toEqual(verdicts);
  expect(got.marks).toBe(marks);
  // The running total is exactly the sum of the admitted counts.
  expect(got.verdicts.reduce((sum, v) => sum + (v.kind === 'mark' ? v.count : 0), 0)).toBe(marks);
}

// Lines no tracker may ever count: prose, blanks, broken JSON, non-objects.
const PROSE = ['', '   ', 'Thinking about the repository...', '{"type":', '{not json}', '[1,2]', '"progress"', '42', 'null', '\t'];

afterEach(() => {
  vi.restoreAllMocks();
});

describe('createTracker', () => {
  test('should list the four kinds the contract names', () => {
    expect(TRACKER_KINDS).toEqual(['step-lifecycle', 'claude-stream-json', 'codex-json', 'jsonl-counter', 'gemini-stream-json']);
    expect(Object.isFrozen(TRACKER_KINDS)).toBe(true);
  });

  test.each(TRACKER_KINDS)('should create a fresh %s tracker with zero marks', (kind) => {
    const a = createTracker(kind);
    const b = createTracker(kind);
    expect(a).not.toBe(b);
    expect(a.marks).toBe(0);
  });

  test('should refuse a kind outside the union from an untyped caller', () => {
    expect(() => createTracker('bytes' as TrackerKind)).toThrow(TypeError);
  });

  test.each(TRACKER_KINDS)('should ignore prose, blank and malformed lines and never throw (%s)', (kind) => {
    const tracker = createTracker(kind);
    // The `\u0041` escape makes every tracker parse the deep lines rather than skip them.
    const deep = '['.repeat(100_000);
    const hostile = [...PROSE, deep, '{"a\\u0041":' + deep, '{"a\\u0041":' + deep + ']'.repeat(100_000) + '}', '{"__proto__":{"type":"result","progress":1}}', undefined as unknown as string, 7 as unknown as string];
    for (const line of hostile) expect(tracker.feed(line)).toEqual(I);
    expect(tracker.marks).toBe(0);
  });

  test.each(TRACKER_KINDS)('should not parse lines that cannot be events (%s)', (kind) => {
    const parse = vi.spyOn(JSON, 'parse');
    const tracker = createTracker(kind);
    for (const line of ['plain prose', '  - a bullet', '{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}]}}', '{"type":"stream_event","event":{"delta":{"text":"x"}}}']) {
      expect(tracker.feed(line)).toEqual(I);
    }
    expect(parse).not.toHaveBeenCalled();
  });
});

const step = (type: string, conversation: unknown, index: unknown, status: string): string =>
  JSON.stringify({ type, conversation_id: conversation, step_index: index, status });
const su = (conversation: unknown, index: unknown, status: string): string => step('step_update', conversation, index, status);

describe('step-lifecycle', () => {
  test.each<Row>([
    ['should admit the first sighting and the first close', [su('c', 0, 'pending'), su('c', 0, 'success')], [M(), M()], 2],
    ['should admit a first sighting at in_progress', [su('c', 0, 'in_progress'), su('c', 0, 'failure')], [M(), M()], 2],
    [
      'should not admit repeated pending or in_progress frames',
      [su('c', 1, 'pending'), su('c', 1, 'pending'), su('c', 1, 'in_progress'), su('c', 1, 'in_progress'), su('c', 1, 'success')],
      [M(), I, I, I, M()],
      2,
    ],
    ['should not admit a second close', [su('c', 1, 'pending'), su('c', 1, 'success'), su('c', 1, 'success'), su('c', 1, 'failure')], [M(), M(), I, I], 2],
    ['should admit exactly one for an identity first seen closed', [su('c', 2, 'success'), su('c', 2, 'failure')], [M(), I], 1],
    ['should not reopen a closed identity', [su('c', 2, 'failure'), su('c', 2, 'pending'), su('c', 2, 'in_progress'), su('c', 2, 'success')], [M(), I, I, I], 1],
    [
      'should treat both event types as one lifecycle per identity',
      [step('step_update', 'c', 3, 'pending'), step('native_tool_v4', 'c', 3, 'in_progress'), step('native_tool_v4', 'c', 3, 'success')],
      [M(), I, M()],
      2,
    ],
    [
      'should keep steps and conversations apart',
      [su('c', 0, 'pending'), su('c', 1, 'pending'), su('d', 0, 'pending'), su('d', 0, 'success'), su('c', 0, 'success')],
      [M(), M(), M(), M(), M()],
      5,
    ],
    [
      'should not collide identities that share a joined spelling',
      [su('a:1', 2, 'pending'), su('a', 12, 'pending'), su('a1', 2, 'pending'), su('2a', 1, 'pending'), su('a:', 12, 'pending'), su('12:a', 0, 'pending'), su('a', 1, 'pending')],
      [M(), M(), M(), M(), M(), M(), M()],
      7,
    ],
    ['should ignore a step index written as a string', [su('a:1', 2, 'pending'), su('a', '1:2', 'pending'), su('a', '12', 'pending')], [M(), I, I], 1],
    [
      'should ignore anonymous or wrong-typed identities',
      [su('', 0, 'pending'), su(7, 0, 'pending'), su(null, 0, 'pending'), su('c', -1, 'pending'), su('c', 1.5, 'pending'), su('c', null, 'pending'), su('c', 2 ** 53, 'pending'), '{"type":"step_update","step_index":0,"status":"pending"}', '{"type":"step_update","conversation_id":"c","status":"pending"}'],
      [I, I, I, I, I, I, I, I, I],
      0,
    ],
    [
      'should ignore unknown statuses and types without opening the identity',
      [su('c', 0, 'running'), su('c', 0, 'SUCCESS'), '{"type":"step_update","conversation_id":"c","step_index":0}', step('native_tool_v3', 'c', 0, 'pending'), step('tool_update', 'c', 0, 'success'), su('c', 0, 'success')],
      [I, I, I, I, I, M()],
      1,
    ],
    ['should ignore prose and malformed lines between events', [...PROSE, su('c', 0, 'pending'), '{"type":"step_update",', su('c', 0, 'success')], [...PROSE.map(() => I), M(), I, M()], 2],
    ['should accept extra fields and surrounding whitespace', ['  {"type":"step_update","conversation_id":"c","step_index":0,"status":"pending","tool":"read"}\r'], [M()], 1],
    ['should read an event whose literal is spelled with a \\u escape', ['{"type":"step\\u005fupdate","conversation_id":"c","step_index":0,"status":"pending"}'], [M()], 1],
    ['should treat -0 as step 0', ['{"type":"step_update","conversation_id":"c","step_index":-0,"status":"pending"}', su('c', 0, 'pending')], [M(), I], 1],
  ])('%s', (...row) => expectRow('step-lifecycle', row));
});

const assistant = (...blocks: unknown[]): string => JSON.stringify({ type: 'assistant', message: { role: 'assistant', content: blocks } });
const user = (...blocks: unknown[]): string => JSON.stringify({ type: 'user', message: { role: 'user', content: blocks } });
const toolUse = (id: unknown): unknown => ({ type: 'tool_use', id, name: 'Read', input: { file_path: 'a.ts' } });
const toolResult = (id: unknown): unknown => ({ type: 'tool_result', tool_use_id: id, content: 'ok' });
const text = { type: 'text', text: 'Let me look at "tool_use" and the "result".' };
const RESULT = '{"type":"result","subtype":"success","is_error":false,"result":"done","usage":{"input_tokens":3}}';

describe('claude-stream-json', () => {
  test.each<Row>([
    ['should admit a tool_use and its tool_result', [assistant(toolUse('toolu_1')), user(toolResult('toolu_1'))], [M(), M()], 2],
    ['should admit one mark per new id when a line opens several', [assistant(text, toolUse('toolu_1'), toolUse('toolu_2')), user(toolResult('toolu_1'), toolResult('toolu_2'))], [M(2), M(2)], 4],
    ['should count only the new ids of a line', [assistant(toolUse('toolu_1')), assistant(toolUse('toolu_1'), toolUse('toolu_2'), toolUse('toolu_2'))], [M(), M()], 2],
    ['should not admit a repeated tool_use', [assistant(toolUse('toolu_1')), assistant(toolUse('toolu_1'))], [M(), I], 1],
    ['should not admit a second close', [assistant(toolUse('toolu_1')), user(toolResult('toolu_1')), user(toolResult('toolu_1'), toolResult('toolu_1'))], [M(), M(), I], 2],
    ['should not admit a close of an id never opened', [user(toolResult('toolu_9')), assistant(toolUse('toolu_9')), user(toolResult('toolu_9'))], [I, M(), M()], 2],
    ['should not reopen a closed id', [assistant(toolUse('toolu_1')), user(toolResult('toolu_1')), assistant(toolUse('toolu_1'))], [M(), M(), I], 2],
    ['should close only the opened ids of a line', [assistant(toolUse('toolu_1')), user(toolResult('toolu_1'), toolResult('toolu_2'))], [M(), M()], 2],
    [
      'should ignore anonymous tool blocks',
      [assistant(toolUse('')), assistant(toolUse(7)), assistant({ type: 'tool_use', name: 'Read' }), user(toolResult('')), user({ type: 'tool_result' })],
      [I, I, I, I, I],
      0,
    ],
    [
      'should ignore blocks of the wrong message side or type',
      [user(toolUse('toolu_1')), assistant(toolResult('toolu_1')), assistant({ type: 'server_tool_use', id: 'srvtoolu_1' }), JSON.stringify({ type: 'system', message: { content: [toolUse('toolu_1')] } })],
      [I, I, I, I],
      0,
    ],
    [
      'should ignore text, thinking, system, usage and stream frames',
      [
        assistant(text),
        assistant({ type: 'thinking', thinking: 'a "tool_use" is next' }),
        '{"type":"system","subtype":"init","session_id":"s","tools":["Read"]}',
        '{"type":"stream_event","event":{"type":"message_delta","usage":{"output_tokens":12}}}',
        '{"type":"assistant","message":{"content":"tool_use"}}',
        '{"type":"assistant","message":null,"note":"tool_use"}',
        '{"type":"assistant","message":{"content":[null,1,"tool_use",["tool_use"]]}}',
      ],
      [I, I, I, I, I, I, I],
      0,
    ],
    ['should report the result event as terminal, never a mark', [assistant(toolUse('toolu_1')), RESULT, RESULT], [M(), T, T], 1],
    ['should report a failed result as terminal too', ['{"type":"result","subtype":"error_max_turns","is_error":true}'], [T], 0],
    ['should ignore prose and malformed lines between events', [...PROSE, assistant(toolUse('toolu_1')), '{"type":"user","message":{"content":[{"type":"tool_result",'], [...PROSE.map(() => I), M(), I], 1],
  ])('%s', (...row) => expectRow('claude-stream-json', row));
});

const started = (item: unknown): string => JSON.stringify({ type: 'item.started', item });
const completed = (item: unknown): string => JSON.stringify({ type: 'item.completed', item });
const cmd = (id: unknown): unknown => ({ id, type: 'command_execution', command: 'ls', status: 'in_progress' });
const TURN_DONE = '{"type":"turn.completed","usage":{"input_tokens":10,"output_tokens":3}}';

describe('codex-json', () => {
  test.each<Row>([
    ['should admit an item start and its completion', [started(cmd('item_0')), completed(cmd('item_0'))], [M(), M()], 2],
    ['should admit exactly one for an item first seen completed', [completed(cmd('item_1')), completed({ id: 'item_1' })], [M(), I], 1],
    [
      'should never admit reasoning or agent messages, which are thinking and prose',
      [started({ id: 'r1', type: 'reasoning' }), completed({ id: 'r1', type: 'reasoning' }), completed({ id: 'm1', type: 'agent_message', text: 'hi' })],
      [I, I, I],
      0,
    ],
    ['should not admit a repeated start or a second completion', [started(cmd('item_0')), started(cmd('item_0')), completed(cmd('item_0')), completed(cmd('item_0'))], [M(), I, M(), I], 2],
    ['should not reopen a completed item', [completed(cmd('item_0')), started(cmd('item_0'))], [M(), I], 1],
    ['should keep items apart', [started(cmd('item_0')), started(cmd('item_1')), completed(cmd('item_1')), completed(cmd('item_0'))], [M(), M(), M(), M()], 4],
    ['should not admit item updates', [started(cmd('item_0')), JSON.stringify({ type: 'item.updated', item: cmd('item_0') })], [M(), I], 1],
    [
      'should ignore anonymous or malformed items',
      [started({ type: 'reasoning' }), started(cmd('')), started(cmd(3)), completed(null), completed(['item_0']), '{"type":"item.started"}', '{"type":"item.started","id":"item_0"}'],
      [I, I, I, I, I, I, I],
      0,
    ],
    [
      'should ignore thread, turn and error events',
      ['{"type":"thread.started","thread_id":"t"}', '{"type":"turn.started"}', '{"type":"turn.failed","error":{"message":"x"}}', '{"type":"error","message":"item.started"}'],
      [I, I, I, I],
      0,
    ],
    ['should report turn.completed as terminal, never a mark', [started(cmd('item_0')), TURN_DONE, TURN_DONE], [M(), T, T], 1],
    ['should ignore prose and malformed lines between events', [...PROSE, started(cmd('item_0')), '{"type":"item.completed","item":{"id":'], [...PROSE.map(() => I), M(), I], 1],
  ])('%s', (...row) => expectRow('codex-json', row));
});

const p = (n: unknown): string => JSON.stringify({ progress: n });

describe('jsonl-counter', () => {
  test.each<Row>([
    ['should admit the first value, even 0', [p(0)], [M()], 1],
    ['should admit each higher value once, whatever the step', [p(1), p(2), p(10), p(11)], [M(), M(), M(), M()], 4],
    ['should ignore an equal value', [p(3), p(3), p(4), p(4)], [M(), I, M(), I], 2],
    ['should report a lower value as invalid and keep the last admitted one', [p(5), p(3), p(4), p(5), p(6)], [M(), X('progress went from 5 to 3'), X('progress went from 5 to 4'), I, M()], 2],
    ['should report a drop to 0 as invalid', [p(0), p(1), p(0)], [M(), M(), X('progress went from 1 to 0')], 2],
    ['should report any number below the last as invalid, negative or fractional', [p(5), p(-1), p(4.5)], [M(), X('progress went from 5 to -1'), X('progress went from 5 to 4.5')], 1],
    [
      'should ignore values that are not non-negative safe integers',
      [p(-1), p(1.5), p('3'), p(null), p(true), p([1]), p({ n: 1 }), p(2 ** 53), '{"progress":1e400}', '{"count":3}', '{}'],
      [I, I, I, I, I, I, I, I, I, I, I],
      0,
    ],
    ['should not let ignored values move the counter', [p(2), p(2.5), p(2 ** 60), p(3)], [M(), I, I, M()], 2],
    ['should accept extra fields, whitespace and integral exponents', [' {"progress":1,"phase":"scan"} ', '{"progress":2.0}', '{"progress":3e0}'], [M(), M(), M()], 3],
    ['should ignore prose and malformed lines between values', [...PROSE, p(1), '{"progress":', p(2)], [...PROSE.map(() => I), M(), I, M()], 2],
  ])('%s', (...row) => expectRow('jsonl-counter', row));
});

const se = (event: unknown): string => JSON.stringify({ type: 'stream_event', session_id: 's', event });
const msgStart = (id: unknown): string => se({ type: 'message_start', message: { id, type: 'message', role: 'assistant', content: [] } });
const blockStart = (index: unknown): string => se({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
const blockStop = (index: unknown): string => se({ type: 'content_block_stop', index });
const MSG_STOP = se({ type: 'message_stop' });
const textDelta = (t: string): string => se({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: t } });

describe('claude-stream-json: message framing (--include-partial-messages)', () => {
  test.each<Row>([
    [
      'should admit a message start, each block start and stop, and the message stop',
      [msgStart('msg_1'), blockStart(0), textDelta('hi'), blockStop(0), blockStart(1), blockStop(1), se({ type: 'message_delta', delta: { stop_reason: 'end_turn' } }), MSG_STOP],
      [M(), M(), I, M(), M(), M(), I, M()],
      6,
    ],
    [
      'should never admit text or thinking deltas, whatever they say',
      [
        msgStart('msg_1'),
        textDelta('x'),
        textDelta('"message_start" "content_block_start" "tool_use" "message_stop"'),
        se({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: '"content_block_stop"' } }),
        se({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"message_stop"' } }),
      ],
      [M(), I, I, I, I],
      1,
    ],
    [
      'should admit nothing for a message without an id, nor its blocks and stop',
      [se({ type: 'message_start', message: { type: 'message' } }), blockStart(0), blockStop(0), MSG_STOP, msgStart(''), blockStart(0), msgStart(7), blockStop(0), MSG_STOP],
      [I, I, I, I, I, I, I, I, I],
      0,
    ],
    [
      'should admit a repeated start or stop once',
      [msgStart('msg_1'), msgStart('msg_1'), blockStart(0), blockStart(0), blockStop(0), blockStop(0), MSG_STOP, MSG_STOP],
      [M(), I, M(), I, M(), I, M(), I],
      4,
    ],
    [
      'should not reopen a stopped message or block',
      [msgStart('msg_1'), blockStart(0), blockStop(0), MSG_STOP, msgStart('msg_1'), blockStart(0), blockStop(0), MSG_STOP],
      [M(), M(), M(), M(), I, I, I, I],
      4,
    ],
    [
      'should keep the blocks of different messages apart',
      [msgStart('msg_1'), blockStart(0), blockStop(0), MSG_STOP, msgStart('msg_2'), blockStart(0), blockStop(0), MSG_STOP],
      [M(), M(), M(), M(), M(), M(), M(), M()],
      8,
    ],
    [
      'should admit nothing for blocks outside a message or with a bad index',
      [blockStart(0), blockStop(0), msgStart('msg_1'), blockStart(-1), blockStart(1.5), blockStart('0'), blockStart(null), blockStart(2 ** 53), se({ type: 'content_block_start' }), blockStop(3)],
      [I, I, M(), I, I, I, I, I, I, I],
      1,
    ],
    [
      'should ignore stream events that are not objects or frame nothing',
      [se(null), se(['message_start']), se('message_start'), JSON.stringify({ type: 'stream_event' }), se({ type: 'ping', note: 'message_start' }), se({ type: 'message_start', message: [{ id: 'm' }] })],
      [I, I, I, I, I, I],
      0,
    ],
    [
      'should not let a message id close a tool of the same id, nor a tool id a message',
      [msgStart('toolu_1'), user(toolResult('toolu_1')), assistant(toolUse('msg_1')), msgStart('msg_1')],
      [M(), I, M(), M()],
      3,
    ],
    [
      'should keep framing and tool lifecycles side by side in one turn',
      [msgStart('msg_1'), blockStart(0), blockStop(0), MSG_STOP, assistant(toolUse('toolu_1')), user(toolResult('toolu_1')), RESULT],
      [M(), M(), M(), M(), M(), M(), T],
      6,
    ],
  ])('%s', (...row) => expectRow('claude-stream-json', row));
});

const gem = (value: Record<string, unknown>): string => JSON.stringify(value);
const gUse = (id: unknown): string => gem({ type: 'tool_use', tool_name: 'read_file', tool_id: id, parameters: { path: 'a' } });
const gResult = (id: unknown): string => gem({ type: 'tool_result', tool_id: id, status: 'success', output: 'ok' });
const G_RESULT = gem({ type: 'result', status: 'success', stats: { input_tokens: 3 } });

describe('gemini-stream-json', () => {
  test.each<Row>([
    ['should admit a tool_use and its tool_result', [gUse('t1'), gResult('t1')], [M(), M()], 2],
    ['should not admit a repeated tool_use or a second result', [gUse('t1'), gUse('t1'), gResult('t1'), gResult('t1')], [M(), I, M(), I], 2],
    ['should not admit a result of a tool never opened', [gResult('t9'), gUse('t9'), gResult('t9')], [I, M(), M()], 2],
    ['should not reopen a closed tool', [gUse('t1'), gResult('t1'), gUse('t1')], [M(), M(), I], 2],
    ['should keep tools apart', [gUse('t1'), gUse('t2'), gResult('t2'), gResult('t1')], [M(), M(), M(), M()], 4],
    [
      'should ignore anonymous or wrong-typed tool ids',
      [gUse(''), gUse(7), gUse(null), gUse(['t1']), gem({ type: 'tool_use', tool_name: 'x' }), gResult('')],
      [I, I, I, I, I, I],
      0,
    ],
    [
      'should never admit messages, init or errors, whatever they say',
      [
        gem({ type: 'init', session_id: 's', model: 'm' }),
        gem({ type: 'message', role: 'assistant', content: 'a "tool_use" then a "tool_result"', delta: true }),
        gem({ type: 'message', role: 'user', content: '"result"' }),
        gem({ type: 'error', message: '"tool_use" failed' }),
      ],
      [I, I, I, I],
      0,
    ],
    ['should report the result event as terminal, never a mark', [gUse('t1'), G_RESULT, G_RESULT], [M(), T, T], 1],
    ['should report an error result as terminal too', [gem({ type: 'result', status: 'error', error: { message: 'x' } })], [T], 0],
    ['should ignore prose and malformed lines between events', [...PROSE, gUse('t1'), '{"type":"tool_result","tool_id":'], [...PROSE.map(() => I), M(), I], 1],
  ])('%s', (...row) => expectRow('gemini-stream-json', row));
});
