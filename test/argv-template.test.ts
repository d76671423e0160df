import { describe, expect, test } from 'vitest';
import { LanewardError } from '../formats/codes/error.ts';
import { fillTemplate, splitTemplate } from '../main/plan/argv-template.ts';

describe('splitTemplate', () => {
  test.each([
    ['node r.mjs {prompt} {result}', ['node', 'r.mjs', '{prompt}', '{result}']],
    ["  node   'a b'  \"c d\"  ", ['node', 'a b', 'c d']],
    [`say "it's \\"fine\\"" 'back\\slash'`, ['say', `it's "fine"`, 'back\\slash']],
    ['a\\ b c', ['a b', 'c']],
    ["--out=''x", ['--out=x']],
    ["''", ['']],
    ['echo $HOME `id` *; rm -rf ~', ['echo', '$HOME', '`id`', '*;', 'rm', '-rf', '~']],
  ])('should split %j into words with no shell', (text, words) => {
    expect(splitTemplate('native', text)).toEqual(words);
  });

  test.each([
    ["node 'open", "--native holds an unterminated ' quote at character 6"],
    ['node "open', '--native holds an unterminated " quote at character 6'],
    ['node \\', '--native holds a trailing backslash'],
    ['   ', '--native holds an empty command'],
  ])('should refuse %j as a usage error', (text, message) => {
    let caught: unknown;
    try {
      splitTemplate('native', text);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(LanewardError);
    expect((caught as LanewardError).code).toBe('USAGE');
    expect((caught as LanewardError).message.startsWith(message)).toBe(true);
  });
});

describe('fillTemplate', () => {
  test('should replace {prompt} and {result} inside each word, keeping words whole', () => {
    expect(fillTemplate(['cmd', '--in={prompt}', '{result}', '{prompt}{result}', '{other}'], { prompt: '/a b/p.md', result: '/r $x.md' })).toEqual([
      'cmd', '--in=/a b/p.md', '/r $x.md', '/a b/p.md/r $x.md', '{other}',
    ]);
  });

  test('should not expand a placeholder that a path brings in', () => {
    expect(fillTemplate(['{prompt}', '{result}'], { prompt: '{result}', result: 'r' })).toEqual(['{result}', 'r']);
  });
});
