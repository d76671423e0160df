import { describe, expect, test } from 'vitest';
import { JsonlLineSplitter } from '../formats/jsonl/lines.ts';
import { parseJsonlRow } from '../formats/jsonl/row.ts';

/** Feeds `text` through one reused buffer in chunks of `size` bytes, as the file reader does. */
function split(text: string, size: number, maxLineBytes?: number): [string | null, number][] {
  const out: [string | null, number][] = [];
  const splitter = new JsonlLineSplitter((line, n) => out.push([line, n]), maxLineBytes);
  const bytes = Buffer.from(text);
  const shared = Buffer.alloc(size);
  for (let at = 0; at < bytes.length; at += size) {
    const n = bytes.copy(shared, 0, at, at + size);
    splitter.push(shared.subarray(0, n));
    shared.fill(0x7a);
  }
  splitter.end();
  return out;
}

describe('JsonlLineSplitter', () => {
  test.each([1, 2, 3, 7, 64])('should give the same lines for chunks of %i bytes through a reused buffer', (size) => {
    const text = '{"a":1}\n{"b":"ünïcødé ✓"}\n\n{"c":[1,2,3]}\n';
    expect(split(text, size)).toEqual([
      ['{"a":1}', 1],
      ['{"b":"ünïcødé ✓"}', 2],
      ['', 3],
      ['{"c":[1,2,3]}', 4],
    ]);
  });

  test('should treat the final newline as the end of the last line, not a blank line', () => {
    expect(split('{"a":1}\n', 4)).toEqual([['{"a":1}', 1]]);
    expect(split('', 4)).toEqual([]);
  });

  test('should emit a last line that has no final newline', () => {
    expect(split('{"a":1}\n{"b":', 3)).toEqual([
      ['{"a":1}', 1],
      ['{"b":', 2],
    ]);
  });

  test('should report an overlong line as null and keep counting lines after it', () => {
    const long = 'x'.repeat(100);
    expect(split(`{"a":1}\n${long}\n{"b":2}\n${long}`, 16, 50)).toEqual([
      ['{"a":1}', 1],
      [null, 2],
      ['{"b":2}', 3],
      [null, 4],
    ]);
  });
});

describe('JsonlLineSplitter and byte order marks', () => {
  test.each([1, 5, 4096])('should keep a BOM as text on every line, whatever the chunk size (%i)', (size) => {
    const lines = split('\uFEFF{"a":1}\n\uFEFF{"b":2}\n', size);
    expect(lines.map(([text]) => text)).toEqual(['\uFEFF{"a":1}', '\uFEFF{"b":2}']);
    expect(lines.map(([text]) => parseJsonlRow(text))).toEqual([{ malformed: 'line is not valid JSON' }, { malformed: 'line is not valid JSON' }]);
  });
});

describe('parseJsonlRow', () => {
  test.each([
    ['', 'blank line'],
    ['   ', 'blank line'],
    ['{"a":', 'line is not valid JSON'],
    ['[1]', 'line is not a JSON object'],
    ['null', 'line is not a JSON object'],
    ['"text"', 'line is not a JSON object'],
  ])('should call %j malformed: %s', (text, message) => {
    expect(parseJsonlRow(text)).toEqual({ malformed: message });
  });

  test('should call a missing line over the limit malformed', () => {
    expect(parseJsonlRow(null)).toEqual({ malformed: 'line over 16 MiB' });
  });

  test('should return the object of a well-formed row', () => {
    expect(parseJsonlRow('{"id":"r-1"}\r')).toEqual({ row: { id: 'r-1' } });
  });
});
