import { describe, expect, test } from 'vitest';
import { jsonSyntaxError, jsonText, parseJson } from '../formats/text/json-text.ts';
import { nearestWord } from '../formats/text/nearest-word.ts';
import { appendToArrayMember } from '../formats/text/json-splice.ts';
import { JsonlLineSplitter } from '../formats/jsonl/lines.ts';

describe('jsonText', () => {
  test.each([
    [null], [true], [0], [-1.5e-7], ['a"\\\n\u2028\u001b'], [[]], [{}], [[1, [2, [3]], { a: [] }]],
    [{ a: 1, b: undefined, c: [undefined, null], d: { e: { f: 'g' } }, '': 0, __proto__x: 1 }],
    [JSON.parse('{"__proto__": {"x": 1}, "constructor": [1]}')],
    [[Number.NaN, Infinity]],
  ])('should print %j exactly as JSON.stringify does', (value) => {
    expect(jsonText(value)).toBe(JSON.stringify(value));
  });

  test('should print a value nested 200,000 levels deep that JSON.stringify cannot', () => {
    const text = `${'['.repeat(200_000)}{"a":${'{"b":'.repeat(1000)}1${'}'.repeat(1000)}}${']'.repeat(200_000)}`;
    expect(() => JSON.stringify(JSON.parse(text))).toThrow(RangeError);
    expect(jsonText(JSON.parse(text))).toBe(text);
  });
});

describe('appendToArrayMember', () => {
  const item = (spaced: boolean) => (spaced ? '{"c": 1}' : '{"c":1}');
  test.each([
    ['{"a":1}', '{"a":1,"consumed_by":[{"c":1}]}'],
    ['{\n  "a": 1\n}\n', '{\n  "a": 1,\n  "consumed_by": [{"c": 1}]\n}\n'],
    ['{"consumed_by":[],"z":"]}"}', '{"consumed_by":[{"c":1}],"z":"]}"}'],
    ['{"consumed_by":[1],"consumed_by":[2, 3]}', '{"consumed_by":[1],"consumed_by":[2, 3, {"c":1}]}'],
    ['{"k\\"}":"v\\\\","consumed_by":[{"a":"[{"}]}', '{"k\\"}":"v\\\\","consumed_by":[{"a":"[{"},{"c":1}]}'],
    ['{"consumed\\u005fby":[]}', '{"consumed\\u005fby":[{"c":1}]}'],
  ])('should add one item to %j and keep every other byte', (input, output) => {
    expect(JSON.parse(input)).toBeTruthy();
    expect(appendToArrayMember(Buffer.from(input), 'consumed_by', item).toString()).toBe(output);
  });
});

describe('JsonlLineSplitter and UTF-8 (8)', () => {
  test('should hand on a line whose bytes are not UTF-8 without text, and decode the others', () => {
    const lines: [string | null, number, string | undefined][] = [];
    const splitter = new JsonlLineSplitter((text, line, problem) => lines.push([text, line, problem]));
    splitter.push(Buffer.concat([Buffer.from('{"a":"é"}\n{"id":"x'), Buffer.from([0xff]), Buffer.from('"}\n{"b":1}\n{"c":"'), Buffer.from([0xc3])]));
    splitter.push(Buffer.from('"}\n'));
    splitter.end();
    expect(lines).toEqual([
      ['{"a":"é"}', 1, undefined],
      [null, 2, 'line is not valid UTF-8'],
      ['{"b":1}', 3, undefined],
      [null, 4, 'line is not valid UTF-8'],
    ]);
  });
});

describe('parseJson', () => {
  test.each([
    ['', 1, 1, 'a JSON value'],
    ['{"a":1,}', 1, 8, 'a "key" in double quotes'],
    ['{"a":1', 1, 7, "',' or '}'"],
    ['{x', 1, 2, 'a "key" in double quotes or \'}\''],
    ['{"a": tru}', 1, 7, 'a JSON value'],
    ['[1,\n2\n,]', 3, 2, 'a JSON value'],
    ['{"a":1}\n{"b":2}', 2, 1, 'the end of the text (one JSON document)'],
    ['{"a" 1}', 1, 6, "':'"],
    ['[1 2]', 1, 4, "',' or ']'"],
    ['"\t"', 1, 1, 'a JSON value'],
  ])('should place the error in %j at line %i column %i', (text, line, column, expected) => {
    expect(parseJson(text)).toEqual({ ok: false, line, column, expected });
  });

  test.each([['{}'], ['[]'], [' {"a": [1, {"b": null}], "c": "\\u00e9"} '], ['-0.5e+3'], ['[[],[{}],{"x":[]}]']])('should read %j as JSON.parse does', (text) => {
    expect(parseJson(text)).toEqual({ ok: true, value: JSON.parse(text) });
    expect(jsonSyntaxError(text)).toBeNull();
  });

  test('should place an error under 100,000 levels of nesting without overflowing the stack', () => {
    const text = `${'['.repeat(100_000)}1,${']'.repeat(100_000)}`;
    expect(parseJson(text)).toMatchObject({ ok: false, line: 1, column: 100_003 });
  });
});

describe('nearestWord', () => {
  test.each([
    ['worksapce', ['workspace', 'lanes'], 'workspace'],
    ['concurency', ['concurrency', 'lanes'], 'concurrency'],
    ['Lanes', ['lanes', 'count'], 'lanes'],
    ['zzzzzzzz', ['concurrency', 'lanes'], null],
    ['x', ['ab', 'cd'], null],
  ])('should suggest for %j among %j: %j', (word, known, near) => {
    expect(nearestWord(word, known)).toBe(near);
  });
});
