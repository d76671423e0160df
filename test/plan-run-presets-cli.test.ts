import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { codesOf, ensureBuilt, laneward } from './helpers/cli.ts';
import { tempRoot } from './helpers/tmp.ts';

// `plan run`'s preset options, read before anything is dispatched: every bad value is a
// usage error naming the option (exit 2), never a stack trace, and nothing starts.

const root = tempRoot('plan-run-presets');
ensureBuilt();

const fifo = join(root, 'fifo');
execFileSync('mkfifo', [fifo]);
mkdirSync(join(root, 'dir'));
writeFileSync(join(root, 'bad-utf8.json'), Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]));
writeFileSync(join(root, 'nested.json'), `${'['.repeat(100_000)}${']'.repeat(100_000)}`);
writeFileSync(join(root, 'negative.json'), JSON.stringify({ 'gpt-5.5': { input: -1, output: 1 } }));
writeFileSync(join(root, 'proto.json'), '{"__proto__": {"input": 1, "output": 1}, "m": {"input": 1, "output": 1, "extra": 2}}');
symlinkSync(join(root, 'dir'), join(root, 'link'));

const claude = JSON.stringify({ preset: 'claude-code', bin: '/bin/true' });
const run = (extra: readonly string[]) =>
  laneward(['plan', 'run', '--out', join(root, 'run'), '--native', claude, '--outside', claude, '--actions', 'a', '--trust', 't', '--action', 'x', ...extra], { cwd: root, timeoutMs: 30_000 });

describe('plan run: preset options', () => {
  test.each([
    ['--native that starts with { and is not JSON', ['--native', '{"preset":']],
    ['an unknown preset', ['--native', '{"preset":"claude\\u0007code"}']],
    ['a preset with an unknown key', ['--native', '{"preset":"codex","shell":"rm -rf /"}']],
    ['a LANEWARD_ variable in a preset env', ['--native', '{"preset":"codex","bin":"/bin/true","env":{"LANEWARD_ATTEMPT":"x"}}']],
    ['an env name that is not one', ['--native', '{"preset":"codex","bin":"/bin/true","env":{"A=B":"x"}}']],
    ['a preset bin that does not exist', ['--native', '{"preset":"codex","bin":"/nonexistent/codex"}']],
    ['--prices a FIFO', ['--prices', fifo]],
    ['--prices a directory', ['--prices', join(root, 'dir')]],
    ['--prices a symlink to a directory', ['--prices', join(root, 'link')]],
    ['--prices missing', ['--prices', join(root, 'missing.json')]],
    ['--prices invalid UTF-8', ['--prices', join(root, 'bad-utf8.json')]],
    ['--prices nested 100,000 deep', ['--prices', join(root, 'nested.json')]],
    ['--prices with a negative price', ['--prices', join(root, 'negative.json')]],
    ['--prices with an unknown price field', ['--prices', join(root, 'proto.json')]],
    ['--spend-cap not a number', ['--spend-cap', 'ten']],
    ['--spend-cap negative', ['--spend-cap', '-1']],
    ['--spend-cap empty', ['--spend-cap', '']],
  ])('should refuse %s as USAGE (exit 2), starting nothing', (_, extra) => {
    const ran = run(extra);
    expect(ran.code, ran.stderr).toBe(2);
    expect(codesOf(ran.stderr)).toEqual(['USAGE']);
    expect(ran.stderr).not.toMatch(/\n\s+at /);
    expect(ran.stdout).toBe('');
  });
});
