import { describe, expect, test } from 'vitest';
import { buildConsensus, levelsApart } from '../formats/consensus/build.ts';
import { normaliseFile } from '../formats/consensus/pairing.ts';
import { renderConsensusMarkdown } from '../formats/consensus/render.ts';
import { type Consensus, type ConsensusInput, type Severity } from '../formats/consensus/types.ts';
import { SEVERITIES } from '../formats/schemas/findings.ts';
import { normaliseTitle, titleWords } from '../formats/consensus/title-match.ts';
import { prng as random } from './helpers/prng.ts';

const f = (id: string, severity: Severity, title: string, file?: string, line?: number): ConsensusInput => ({
  id,
  severity,
  title,
  ...(file === undefined ? {} : { file }),
  ...(line === undefined ? {} : { line }),
});

/** Each entry as `outside:verdict:native`, so a table row reads as one string. */
const pairs = (c: Consensus): string[] => c.entries.map((e) => `${e.outside}:${e.verdict}:${e.native ?? '-'}`);

const counts = (c: Consensus): string =>
  `confirmed=${c.confirmed} unverified=${c.unverified} disagree=${c.disagree} new=${c.new} native_only=${c.native_only} coverage=${c.coverage}`;

describe('buildConsensus verdicts', () => {
  test.each([
    ['same title, same severity', f('n1', 'High', 'SQL injection in login'), f('o1', 'High', 'sql injection in LOGIN!'), 'o1:confirmed:n1'],
    ['same title, one level apart', f('n1', 'High', 'SQL injection'), f('o1', 'Medium', 'SQL injection'), 'o1:confirmed:n1'],
    ['same title, two levels apart', f('n1', 'Critical', 'SQL injection'), f('o1', 'Medium', 'SQL injection'), 'o1:disagree:n1'],
    ['Jaccard title, far severities', f('n1', 'Informational', 'Race condition'), f('o1', 'Critical', 'Race condition in worker'), 'o1:disagree:n1'],
    ['no title match, same file, near line', f('n1', 'Low', 'Leaky cache', 'src/a.ts', 40), f('o1', 'High', 'Unbounded queue', 'src/a.ts', 45), 'o1:unverified:n1'],
    ['no title match, other file', f('n1', 'Low', 'Leaky cache', 'src/a.ts', 40), f('o1', 'High', 'Unbounded queue', 'src/b.ts', 40), 'o1:new:-'],
    ['nothing in common', f('n1', 'Low', 'Leaky cache'), f('o1', 'High', 'Unbounded queue'), 'o1:new:-'],
  ])('should judge %s', (_name, native, outside, expected) => {
    const c = buildConsensus('eng', [native], [outside]);
    expect(pairs(c)).toEqual([expected]);
    const verdict = expected.split(':')[1] as string;
    expect(c[verdict as 'confirmed' | 'unverified' | 'disagree' | 'new']).toBe(1);
    expect(c.native_only).toBe(verdict === 'new' ? 1 : 0);
  });

  test('should carry [outside, native] severities for a pair and null for new', () => {
    const c = buildConsensus('eng', [f('n1', 'Critical', 'Open redirect')], [f('o1', 'Low', 'open redirect'), f('o2', 'High', 'Other')]);
    expect(c.entries).toEqual([
      { outside: 'o1', verdict: 'disagree', native: 'n1', severities: ['Low', 'Critical'] },
      { outside: 'o2', verdict: 'new', native: null, severities: null },
    ]);
  });
});

describe('severity distance', () => {
  const grid = SEVERITIES.flatMap((o, i) => SEVERITIES.map((n, j) => [o, n, Math.abs(i - j)] as const));
  test.each(grid)('should judge outside %s against native %s (%i levels apart)', (o, n, distance) => {
    expect(levelsApart(o, n)).toBe(distance);
    const c = buildConsensus('ceo', [f('n1', n, 'Stale cache key')], [f('o1', o, 'Stale cache key')]);
    expect(pairs(c)).toEqual([`o1:${distance >= 2 ? 'disagree' : 'confirmed'}:n1`]);
  });
});

describe('one-to-one pairing', () => {
  test.each([
    [
      'a native finding pairs once: the second outside twin is new',
      [f('n1', 'High', 'Missing auth')],
      [f('o1', 'High', 'Missing auth'), f('o2', 'High', 'missing AUTH')],
      ['o1:confirmed:n1', 'o2:new:-'],
      [],
    ],
    [
      'two native twins pair with two outside twins in order',
      [f('n1', 'High', 'Missing auth'), f('n2', 'Low', 'Missing auth')],
      [f('o1', 'Low', 'Missing auth'), f('o2', 'Critical', 'Missing auth')],
      ['o1:disagree:n1', 'o2:disagree:n2'],
      [],
    ],
    [
      'exact normalised equality beats an earlier Jaccard match',
      [f('n1', 'High', 'Unused import foo bar'), f('n2', 'High', 'Unused import: foo')],
      [f('o1', 'High', 'unused import foo')],
      ['o1:confirmed:n2'],
      ['n1'],
    ],
    [
      'the highest Jaccard beats an earlier lower one',
      [f('n1', 'High', 'alpha beta gamma delta'), f('n2', 'High', 'alpha beta gamma')],
      [f('o1', 'High', 'alpha beta gamma epsilon')],
      ['o1:confirmed:n2'],
      ['n1'],
    ],
    [
      'equal Jaccard goes to the earliest native finding',
      [f('n1', 'High', 'alpha beta gamma yankee'), f('n2', 'High', 'alpha beta gamma xray')],
      [f('o1', 'High', 'alpha beta gamma delta')],
      ['o1:confirmed:n1'],
      ['n2'],
    ],
    [
      'the same word set in another order is a Jaccard 1 match',
      [f('n1', 'High', 'alpha beta gamma delta'), f('n2', 'High', 'gamma, alpha; beta')],
      [f('o1', 'High', 'alpha beta gamma')],
      ['o1:confirmed:n2'],
      ['n1'],
    ],
    [
      'greedy in outside order: the first outside finding takes the better native',
      [f('n1', 'High', 'alpha beta gamma')],
      [f('o1', 'High', 'alpha beta gamma delta'), f('o2', 'High', 'alpha beta gamma')],
      ['o1:confirmed:n1', 'o2:new:-'],
      [],
    ],
    [
      'titles pair before places, so a later title match is not lost to an earlier proximity',
      [f('n1', 'High', 'Leaky cache', 'a.ts', 10)],
      [f('o1', 'High', 'Unbounded queue', 'a.ts', 12), f('o2', 'High', 'Leaky cache', 'a.ts', 50)],
      ['o1:new:-', 'o2:confirmed:n1'],
      [],
    ],
    [
      'a native finding paired by place pairs once',
      [f('n1', 'High', 'Leaky cache', 'a.ts', 10)],
      [f('o1', 'High', 'Unbounded queue', 'a.ts', 12), f('o2', 'High', 'Slow loop', 'a.ts', 10)],
      ['o1:unverified:n1', 'o2:new:-'],
      [],
    ],
    [
      'the nearest line wins over the earliest',
      [f('n1', 'High', 'Leaky cache', 'a.ts', 20), f('n2', 'High', 'Slow loop', 'a.ts', 14)],
      [f('o1', 'High', 'Unbounded queue', 'a.ts', 12)],
      ['o1:unverified:n2'],
      ['n1'],
    ],
    [
      'equally near lines go to the earliest native, above or below',
      [f('n1', 'High', 'Leaky cache', 'a.ts', 14), f('n2', 'High', 'Slow loop', 'a.ts', 10)],
      [f('o1', 'High', 'Unbounded queue', 'a.ts', 12)],
      ['o1:unverified:n1'],
      ['n2'],
    ],
    [
      'a native finding claimed by a title is not paired by place',
      [f('n1', 'High', 'Leaky cache', 'a.ts', 10)],
      [f('o1', 'High', 'Leaky cache'), f('o2', 'High', 'Unbounded queue', 'a.ts', 10)],
      ['o1:confirmed:n1', 'o2:new:-'],
      [],
    ],
  ])('should pair: %s', (_name, native, outside, expected, nativeOnly) => {
    const c = buildConsensus('eng', native, outside);
    expect(pairs(c)).toEqual(expected);
    expect(c.native_only_ids).toEqual(nativeOnly);
    const natives = c.entries.map((e) => e.native).filter((id) => id !== null);
    expect(new Set(natives).size).toBe(natives.length);
  });
});

describe('native_only', () => {
  const native = [f('n1', 'High', 'Missing auth'), f('n2', 'Low', 'Typo in log', 'a.ts', 3), f('n3', 'Medium', 'Slow loop', 'b.ts', 7)];

  test('should count every native finding native-only when the outside voice never bound', () => {
    const c = buildConsensus('design', native, null);
    expect(counts(c)).toBe('confirmed=0 unverified=0 disagree=0 new=0 native_only=3 coverage=native_only');
    expect(c.entries).toEqual([]);
    expect(c.native_only_ids).toEqual(['n1', 'n2', 'n3']);
    expect(c.phase).toBe('design');
  });

  test('should keep coverage both when the outside voice bound with no findings', () => {
    const c = buildConsensus('design', native, []);
    expect(counts(c)).toBe('confirmed=0 unverified=0 disagree=0 new=0 native_only=3 coverage=both');
    expect(c.native_only_ids).toEqual(['n1', 'n2', 'n3']);
  });

  test('should not count a native finding paired only by place as native-only', () => {
    const c = buildConsensus('eng', native, [f('o1', 'High', 'missing auth'), f('o2', 'Low', 'Unchecked cast', 'b.ts', 17), f('o3', 'Low', 'Dead code')]);
    expect(pairs(c)).toEqual(['o1:confirmed:n1', 'o2:unverified:n3', 'o3:new:-']);
    expect(counts(c)).toBe('confirmed=1 unverified=1 disagree=0 new=1 native_only=1 coverage=both');
    expect(c.native_only_ids).toEqual(['n2']);
  });

  test('should count an empty native voice with outside findings as all new', () => {
    const c = buildConsensus('eng', [], [f('o1', 'High', 'A thing'), f('o2', 'Low', 'Another')]);
    expect(counts(c)).toBe('confirmed=0 unverified=0 disagree=0 new=2 native_only=0 coverage=both');
  });
});

describe('file and line proximity', () => {
  const native = [f('n1', 'Medium', 'Leaky cache', 'src/a.ts', 100)];
  test.each([
    ['src/a.ts', 100, 'unverified'],
    ['src/a.ts', 90, 'unverified'],
    ['src/a.ts', 110, 'unverified'],
    ['src/a.ts', 89, 'new'],
    ['src/a.ts', 111, 'new'],
    ['./src/a.ts', 105, 'unverified'],
    ['src\\a.ts', 105, 'unverified'],
    ['src//a.ts', 105, 'unverified'],
    ['src/./a.ts', 105, 'unverified'],
    [' src/a.ts ', 105, 'unverified'],
    ['SRC/a.ts', 100, 'new'],
    ['src/b.ts', 100, 'new'],
    ['lib/../src/a.ts', 100, 'new'],
    ['src/a.ts', 100.5, 'new'],
    ['src/a.ts', undefined, 'new'],
    [undefined, 100, 'new'],
    ['', 100, 'new'],
  ])('should judge an outside finding at %j line %j as %s', (file, line, verdict) => {
    const c = buildConsensus('eng', native, [f('o1', 'Low', 'Unbounded queue', file, line)]);
    expect(pairs(c)).toEqual([`o1:${verdict}:${verdict === 'new' ? '-' : 'n1'}`]);
  });

  test('should need the native line too', () => {
    const c = buildConsensus('eng', [f('n1', 'Medium', 'Leaky cache', 'src/a.ts')], [f('o1', 'Low', 'Unbounded queue', 'src/a.ts', 1)]);
    expect(pairs(c)).toEqual(['o1:new:-']);
  });

  test.each([
    ['./a.ts', 'a.ts'],
    ['././a.ts', 'a.ts'],
    ['.//a.ts', 'a.ts'],
    ['a\\b\\c.ts', 'a/b/c.ts'],
    ['a/././b.ts', 'a/b.ts'],
    ['../a.ts', '../a.ts'],
  ])('should normalise the file %j to %j', (file, expected) => {
    expect(normaliseFile(file)).toBe(expected);
  });
});


/**
 * The documented rule, written the slow and obvious way: every pair scanned, nothing
 * indexed. buildConsensus must agree with it exactly.
 */
function reference(native: readonly ConsensusInput[], outside: readonly ConsensusInput[]): Consensus {
  const taken = native.map(() => false);
  const partner: number[] = outside.map(() => -1);
  const how: string[] = outside.map(() => '');
  const jaccard = (a: string, b: string): number => {
    const wa = new Set(titleWords(normaliseTitle(a)));
    const wb = new Set(titleWords(normaliseTitle(b)));
    const shared = [...wa].filter((w) => wb.has(w)).length;
    const union = wa.size + wb.size - shared;
    return union === 0 ? 0 : shared / union;
  };
  outside.forEach((o, j) => {
    const norm = normaliseTitle(o.title);
    let best = -1;
    let bestScore = 0;
    native.forEach((n, i) => {
      if (taken[i] || best >= 0 && bestScore === 2) return;
      const score = norm !== '' && normaliseTitle(n.title) === norm ? 2 : jaccard(o.title, n.title);
      if (score >= 0.5 && score > bestScore) {
        best = i;
        bestScore = score;
      }
    });
    if (best >= 0) {
      taken[best] = true;
      partner[j] = best;
      how[j] = 'title';
    }
  });
  outside.forEach((o, j) => {
    if (partner[j] !== -1 || o.file === undefined || o.line === undefined) return;
    let best = -1;
    let bestDistance = Infinity;
    native.forEach((n, i) => {
      if (taken[i] || n.file === undefined || n.line === undefined || normaliseFile(n.file) !== normaliseFile(o.file ?? '')) return;
      const distance = Math.abs(n.line - (o.line ?? 0));
      if (distance <= 10 && distance < bestDistance) {
        best = i;
        bestDistance = distance;
      }
    });
    if (best >= 0) {
      taken[best] = true;
      partner[j] = best;
      how[j] = 'place';
    }
  });
  const entries = outside.map((o, j) => {
    const n = native[partner[j] ?? -1];
    if (n === undefined) return { outside: o.id, verdict: 'new' as const, native: null, severities: null };
    const verdict = how[j] === 'place' ? 'unverified' as const : levelsApart(o.severity, n.severity) >= 2 ? 'disagree' as const : 'confirmed' as const;
    return { outside: o.id, verdict, native: n.id, severities: [o.severity, n.severity] as const };
  });
  const count = (v: string): number => entries.filter((e) => e.verdict === v).length;
  const nativeOnly = native.filter((_, i) => !taken[i]).map((n) => n.id);
  return {
    phase: 'eng',
    coverage: 'both',
    confirmed: count('confirmed'),
    unverified: count('unverified'),
    disagree: count('disagree'),
    new: count('new'),
    native_only: nativeOnly.length,
    entries,
    native_only_ids: nativeOnly,
  };
}

/** Findings whose titles draw from `vocabulary` words (so many titles collide), with places. */
function findings(next: () => number, prefix: string, count: number, vocabulary: readonly string[], files: number): ConsensusInput[] {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  return Array.from({ length: count }, (_, i) => {
    const words = Array.from({ length: 1 + Math.floor(next() * 5) }, () => pick(vocabulary));
    const title = words.join(pick([' ', ' ', '-', ': ', ' in ']));
    const placed = next() < 0.7;
    return f(`${prefix}${i}`, pick(SEVERITIES), next() < 0.05 ? '' : title, placed ? `src/f${Math.floor(next() * files)}.ts` : undefined, placed && next() < 0.9 ? Math.floor(next() * 60) : undefined);
  });
}

describe('buildConsensus against the all-pairs reference', () => {
  const seeds = Array.from({ length: 40 }, (_, i) => [i * 7919 + 1]);
  test.each(seeds)('should agree on random voices (seed %i)', (seed) => {
    const next = random(seed);
    const vocabulary = ['cache', 'race', 'auth', 'leak', 'token', 'queue', 'lock', 'retry', 'db', 'io', 'null', 'stale'];
    const native = findings(next, 'n', 30 + Math.floor(next() * 50), vocabulary, 3);
    const outside = findings(next, 'o', 30 + Math.floor(next() * 50), vocabulary, 3);
    const built = buildConsensus('eng', native, outside);
    expect(built).toEqual(reference(native, outside));
    expect(built.confirmed + built.disagree + built.unverified + built.native_only).toBe(native.length);
    expect(built.confirmed + built.disagree + built.unverified + built.new).toBe(outside.length);
  });

  test('should agree on 400 x 400 findings over a wide vocabulary', () => {
    const next = random(424242);
    const vocabulary = Array.from({ length: 60 }, (_, i) => `word${i}`);
    const native = findings(next, 'n', 400, vocabulary, 20);
    const outside = findings(next, 'o', 400, vocabulary, 20);
    expect(buildConsensus('eng', native, outside)).toEqual(reference(native, outside));
  });
});

describe('buildConsensus at 5,000 x 5,000', () => {
  const SIZE = 5000;

  test('should reconcile realistic voices', () => {
    const next = random(5000);
    const vocabulary = Array.from({ length: 3000 }, (_, i) => `term${i.toString(36)}`);
    // Skewed choice: a few words are very common, as in real titles.
    const word = (): string => vocabulary[Math.floor(vocabulary.length * next() ** 3)] as string;
    const native = Array.from({ length: SIZE }, (_, i) =>
      f(`n${i}`, SEVERITIES[i % 5] as Severity, Array.from({ length: 3 + (i % 6) }, word).join(' '), `src/m${i % 400}.ts`, i % 300),
    );
    const outside = Array.from({ length: SIZE }, (_, i) => {
      const source = native[Math.floor(next() * SIZE)] as ConsensusInput;
      const title = i % 3 === 0 ? source.title.toUpperCase() : i % 3 === 1 ? `${source.title} ${word()}` : `${word()} ${word()} ${word()}`;
      return f(`o${i}`, SEVERITIES[(i * 3) % 5] as Severity, title, source.file, (source.line ?? 0) + (i % 13));
    });
    const c = buildConsensus('eng', native, outside);
    expect(c.entries).toHaveLength(SIZE);
    expect(c.confirmed + c.disagree + c.unverified + c.native_only).toBe(SIZE);
    expect(c.confirmed + c.disagree + c.unverified + c.new).toBe(SIZE);
    expect(c.confirmed + c.disagree).toBeGreaterThan(SIZE / 3);
    const natives = c.entries.map((e) => e.native).filter((id) => id !== null);
    expect(new Set(natives).size).toBe(natives.length);
  });

  test.each([
    ['one title for every finding', (i: number) => f(`n${i}`, 'High', 'Missing auth check'), (i: number) => f(`o${i}`, 'High', 'missing auth check'), SIZE, 0],
    [
      'titles that all half-match each other',
      (i: number) => f(`n${i}`, 'High', `Unused import foo${i}`),
      (i: number) => f(`o${i}`, 'High', `Unused import bar${i}`),
      SIZE,
      0,
    ],
    [
      'every finding on one line of one file',
      (i: number) => f(`n${i}`, 'High', `native${i} thing`, 'a.ts', 1),
      (i: number) => f(`o${i}`, 'High', `outside${i} other`, 'a.ts', 5),
      0,
      SIZE,
    ],
  ])('should stay one-to-one with %s', (_name, makeNative, makeOutside, titled, placed) => {
    const native = Array.from({ length: SIZE }, (_, i) => makeNative(i));
    const outside = Array.from({ length: SIZE }, (_, i) => makeOutside(i));
    const c = buildConsensus('eng', native, outside);
    expect(c.confirmed).toBe(titled);
    expect(c.unverified).toBe(placed);
    expect(c.native_only).toBe(0);
    // Greedy, earliest first: each outside finding pairs with the native finding of its own index.
    expect(c.entries.every((e, i) => e.native === `n${i}`)).toBe(true);
  });
});

describe('renderConsensusMarkdown', () => {
  test('should render every verdict and the native-only list', () => {
    const native = [f('n1', 'High', 'Missing auth'), f('n2', 'Critical', 'Open redirect'), f('n3', 'Low', 'Leaky cache', 'a.ts', 3), f('n4', 'Low', 'Typo')];
    const outside = [f('o1', 'High', 'missing auth'), f('o2', 'Low', 'Open redirect'), f('o3', 'Medium', 'Unbounded queue', 'a.ts', 9), f('o4', 'High', 'Dead code\n# injected')];
    const c = buildConsensus('eng', native, outside);
    const titles = new Map([...native, ...outside].map((x) => [x.id, x.title]));
    expect(renderConsensusMarkdown(c, titles).split('\n')).toEqual([
      '# Consensus: eng',
      '',
      'Coverage: both voices reviewed this phase.',
      '',
      'confirmed=1 unverified=1 disagree=1 new=1 native_only=1',
      '',
      '## Outside findings',
      '',
      '- o1: confirmed by native n1 (outside High, native High)',
      '  - outside: missing auth',
      '  - native: Missing auth',
      '- o2: disagrees on severity with native n2 (outside Low, native Critical)',
      '  - outside: Open redirect',
      '  - native: Open redirect',
      '- o3: unverified, near native n3 (outside Medium, native Low)',
      '  - outside: Unbounded queue',
      '  - native: Leaky cache',
      '- o4: new, no native counterpart',
      '  - outside: Dead code\\n# injected',
      '',
      '## Native findings no outside finding was paired with',
      '',
      '- n4: Typo',
      '',
    ]);
  });

  test('should render native-only coverage and a missing title', () => {
    const c = buildConsensus('dx\nphase', [f('n1', 'High', 'Missing auth')], null);
    expect(renderConsensusMarkdown(c, new Map()).split('\n')).toEqual([
      '# Consensus: dx\\nphase',
      '',
      'Coverage: native voice only; the outside voice did not bind, so nothing here is confirmed by a second voice.',
      '',
      'confirmed=0 unverified=0 disagree=0 new=0 native_only=1',
      '',
      '## Outside findings',
      '',
      'None (no outside voice).',
      '',
      '## Native findings no outside finding was paired with',
      '',
      '- n1: (no title recorded)',
      '',
    ]);
  });

  test('should say None for empty lists with both voices', () => {
    const c = buildConsensus('eng', [], []);
    const text = renderConsensusMarkdown(c, new Map());
    expect(text.split('\n').filter((line) => line === 'None.')).toHaveLength(2);
  });
});
