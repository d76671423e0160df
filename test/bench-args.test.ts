import { spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, test } from 'vitest';
import { BENCH_HELP, parseBenchArgs, SUITES } from '../bench/args.ts';
import { ensureBuilt, ROOT } from './helpers/cli.ts';

beforeAll(() => ensureBuilt());

/** The bench as `npm run bench --` runs it, after its build. */
const bench = (args: readonly string[]) => {
  const child = spawnSync(process.execPath, ['--expose-gc', `${ROOT}dist/bench.mjs`, ...args], { encoding: 'utf8', cwd: ROOT });
  return { code: child.status, stdout: child.stdout, stderr: child.stderr };
};

describe('npm run bench', () => {
  test.each([[['--help']], [['-h']], [['crew', '--help']]])('should print its usage for %j and exit 0, running nothing', (args) => {
    const result = bench(args);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(`${BENCH_HELP}\n`);
  });

  test.each([
    [['--nope'], /^bench: Unknown option '--nope' /],
    [['--runs', 'abc'], /^bench: --runs expects a positive whole number, got "abc" /],
    [['--fleet', '0'], /^bench: --fleet expects a positive whole number, got "0" /],
    [['--only', 'z'], /^bench: --only expects one of a, b, c, d, e, got "z" /],
    [['nosuite'], /^bench: unknown suite "nosuite"; /],
  ])('should refuse %j as a usage error (exit 2), one line and no stack trace', (args, line) => {
    const result = bench(args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.split('\n')).toHaveLength(2);
    expect(result.stderr).toMatch(line);
  });
});

describe('parseBenchArgs', () => {
  test('should default to every suite and the documented sizes', () => {
    const parsed = parseBenchArgs([]);
    expect(parsed).toMatchObject({ kind: 'run', suites: [...SUITES], only: undefined });
    expect(parsed.kind === 'run' && parsed.numbers['crew-lanes']).toBe(200);
  });
});
