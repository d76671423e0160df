import { describe, expect, test } from 'vitest';
import { parseAgentTurn } from '../formats/crew/agent-turn.ts';

const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));

describe('parseAgentTurn', () => {
  test.each([
    ['a Latin-1 byte', bytes('{"text": "caf', [0xe9], '", "diff": false, "finish": true}'), 'the turn result is not UTF-8 text (line 1)'],
    ['a lone continuation byte on line 2', bytes('{"text": "ok",\n"diff": false, "finish": true', [0x80], '}'), 'the turn result is not UTF-8 text (line 2)'],
    ['a truncated sequence', bytes('{"text": "', [0xe2, 0x82], '", "diff": false, "finish": false}'), 'the turn result is not UTF-8 text (line 1)'],
    ['half a document', bytes('{"text": "half'), 'the turn result is not one JSON document'],
  ])('should refuse %s', (_name, input, why) => {
    expect(parseAgentTurn(input)).toBe(why);
  });

  test('should read a UTF-8 turn exactly', () => {
    expect(parseAgentTurn(bytes('{"text": "café €", "diff": true, "finish": false}'))).toEqual({ text: 'café €', diff: true, finish: false });
  });
});
