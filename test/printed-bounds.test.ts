import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { issue, renderIssueLine } from '../formats/codes/issue.ts';
import { bounded, PRINTED_VALUE_MAX } from '../formats/text/bounded.ts';
import { codesOf, ensureBuilt, laneward } from './helpers/cli.ts';
import { tempRoot } from './helpers/tmp.ts';

// Every value an error line repeats is bounded: a long one is cut, with its length named.

describe('bounded', () => {
  test.each([
    ['a value at the bound, whole', 'x'.repeat(PRINTED_VALUE_MAX), 'x'.repeat(PRINTED_VALUE_MAX)],
    ['a value past it, cut with its length', 'y'.repeat(100_000), `${'y'.repeat(PRINTED_VALUE_MAX)}... (cut: 100000 characters)`],
    ['a cut that would split a surrogate pair, before the pair', `${'z'.repeat(PRINTED_VALUE_MAX - 1)}\u{1f600}tail`, `${'z'.repeat(PRINTED_VALUE_MAX - 1)}... (cut: ${PRINTED_VALUE_MAX + 5} characters)`],
  ])('should print %s', (_, value, printed) => {
    expect(bounded(value)).toBe(printed);
  });
});

describe('renderIssueLine', () => {
  test('should cut a 100,000-character detail and path, and keep the line ending in its code', () => {
    const line = renderIssueLine('laneward gate parse', issue('GATE_REPLY_UNPARSED', 'p'.repeat(100_000), `reply ${'r'.repeat(100_000)}`));
    expect(line.length).toBeLessThan(3 * PRINTED_VALUE_MAX);
    expect(line).toContain('... (cut: 100006 characters) at ');
    expect(line).toContain('... (cut: 100000 characters)); fix: ');
    expect(line.endsWith('(GATE_REPLY_UNPARSED)')).toBe(true);
  });

  test('should bound a value before escaping it, so a cut never splits an escape', () => {
    const line = renderIssueLine('laneward qa turn', issue('USAGE', '', '\n'.repeat(100_000)));
    expect(line).toContain(`${'\\n'.repeat(PRINTED_VALUE_MAX)}... (cut: 100000 characters)`);
  });
});

describe('an error line of the CLI', () => {
  const root = tempRoot('printed-bounds');
  beforeAll(() => ensureBuilt());

  test('plan status --out a 3,000-character path: one line, the path cut with its length', () => {
    // Under PATH_MAX, in names under NAME_MAX: a path the system takes.
    const out = join(root, ...Array.from({ length: 15 }, () => 'o'.repeat(200)));
    const ran = laneward(['plan', 'status', '--out', out, '--state', join(root, 'state')], { cwd: root });
    expect(ran.code).toBe(3);
    expect(codesOf(ran.stderr)).toEqual(['RUN_NOT_INITIALIZED']);
    expect(ran.stderr.length).toBeLessThan(4 * PRINTED_VALUE_MAX);
    expect(ran.stderr).toContain(`... (cut: ${out.length} characters)`);
  });
});
