import { execFileSync } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import { commandLine } from '../formats/text/command-line.ts';
import { resumeAdvice, resumeArgv, retryAdvice, retryArgv } from '../main/crew/retry-advice.ts';

describe('retry advice', () => {
  test.each([
    ['plain paths', 'crew.json', '/state', 'laneward crew run crew.json --retry-failed --state /state'],
    ['a space and a quote', 'my crew.json', "/s/it's", `laneward crew run 'my crew.json' --retry-failed --state '/s/it'\\''s'`],
    ['a dollar sign', '$HOME/c.json', '/s', `laneward crew run '$HOME/c.json' --retry-failed --state /s`],
  ])('should give the retry command as argv and join it as the line it always printed: %s', (_name, file, root, line) => {
    expect(retryArgv(file, root)).toEqual(['laneward', 'crew', 'run', file, '--retry-failed', '--state', root]);
    expect(retryAdvice(file, root)).toBe(line);
    expect(resumeAdvice(file, root)).toBe(line.replace(' --retry-failed', ''));
  });

  test('should join an argv that a shell reads back as the very same argv', () => {
    const argv = [...resumeArgv("a b'c", '$(touch x)'), '', 'tab\there', 'new\nline'];
    const echoed = execFileSync('/bin/sh', ['-c', `printf '%s\\0' ${commandLine(argv)}`]).toString('utf8');
    expect(echoed.split('\0').slice(0, -1)).toEqual(argv);
  });
});
