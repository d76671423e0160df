import type { ConsensusInput } from './types.ts';
import { normaliseTitle, titleWords } from './title-match.ts';

/**
 * The pairing behind consensus (see buildConsensus for the rule): which native finding,
 * if any, each outside finding pairs with, and whether by title or by place. Near-linear:
 * native findings are indexed by normalised title, by word set, by the rare words of each
 * set (prefix filtering) and by file and line. Work grows with the pairs of titles that
 * share one of their rarest words, not with all pairs: 5,000 x 5,000 realistic findings
 * take about 0.15 s, and 5,000 x 5,000 titles that all half-match one another (the worst
 * case, where every pair is a candidate) about 0.6 s.
 */

/** Lines apart (inclusive) for an outside finding to sit "at" a native one. */
export const NEAR_LINES = 10;

export interface Pairing {
  /** Per native finding: 1 when paired. */
  readonly paired: Uint8Array;
  /** Per outside finding: the native index it pairs with, or -1. */
  readonly partner: Int32Array;
  /** Per outside finding: 1 when the pair is by title, 0 by place or none. */
  readonly byTitle: Uint8Array;
}

export function pairFindings(native: readonly ConsensusInput[], outside: readonly ConsensusInput[]): Pairing {
  const paired = new Uint8Array(native.length);
  const partner = new Int32Array(outside.length).fill(-1);
  const byTitle = new Uint8Array(outside.length);
  pairByTitle(native, outside, paired, partner, byTitle);
  pairByPlace(native, outside, paired, partner);
  return { paired, partner, byTitle };
}

/** Native finding indexes in native order, with a cursor past those already paired. */
interface Queue {
  readonly members: number[];
  at: number;
}

/** The native findings sharing one word set (interchangeable for Jaccard). */
interface WordGroup extends Queue {
  /** Rarest first (the global order the prefix filter needs). */
  readonly words: readonly string[];
  /** The last outside finding that scored this group, so it is scored once per probe. */
  seen: number;
}

/** The earliest unpaired member, or -1. Amortised O(1): a paired member is skipped once. */
function earliestFree(queue: Queue, paired: Uint8Array): number {
  const { members } = queue;
  while (queue.at < members.length && paired[members[queue.at] ?? 0] === 1) queue.at += 1;
  return members[queue.at] ?? -1;
}

/**
 * Sets with Jaccard >= 0.5 share a word among the first floor(n/2) + 1 words of each, with
 * words in one global order (prefix filtering). Ordering rarest first keeps common words
 * ("the", "missing") out of the prefixes, so a probe meets few candidates.
 */
function prefixLength(size: number): number {
  return size - Math.ceil(size / 2) + 1;
}

function pairByTitle(
  native: readonly ConsensusInput[],
  outside: readonly ConsensusInput[],
  paired: Uint8Array,
  partner: Int32Array,
  byTitle: Uint8Array,
): void {
  const nativeNorm = native.map((f) => normaliseTitle(f.title));
  const outsideNorm = outside.map((f) => normaliseTitle(f.title));
  const nativeWords = nativeNorm.map(titleWords);
  const outsideWords = outsideNorm.map(titleWords);
  const frequency = new Map<string, number>();
  for (const sets of [nativeWords, outsideWords]) {
    for (const words of sets) for (const w of words) frequency.set(w, (frequency.get(w) ?? 0) + 1);
  }
  const rarestFirst = (a: string, b: string): number =>
    (frequency.get(a) ?? 0) - (frequency.get(b) ?? 0) || (a < b ? -1 : a > b ? 1 : 0);
  for (const sets of [nativeWords, outsideWords]) for (const words of sets) words.sort(rarestFirst);

  const exact = new Map<string, Queue>();
  const groups = new Map<string, WordGroup>();
  const postings = new Map<string, WordGroup[]>();
  nativeNorm.forEach((norm, i) => {
    if (norm !== '') getOrAdd(exact, norm, () => ({ members: [], at: 0 })).members.push(i);
    const words = nativeWords[i] ?? [];
    if (words.length === 0) return;
    const group = getOrAdd(groups, words.join(' '), () => {
      const created: WordGroup = { members: [], at: 0, words, seen: -1 };
      for (const w of words.slice(0, prefixLength(words.length))) getOrAdd(postings, w, () => []).push(created);
      return created;
    });
    group.members.push(i);
  });

  const pick = (j: number): number => {
    const norm = outsideNorm[j] ?? '';
    const same = norm === '' ? undefined : exact.get(norm);
    const exactFirst = same === undefined ? -1 : earliestFree(same, paired);
    if (exactFirst >= 0) return exactFirst;
    const words = outsideWords[j] ?? [];
    if (words.length === 0) return -1;
    // The same word set is Jaccard 1, the most there is; no probe needed.
    const twin = groups.get(words.join(' '));
    const twinFirst = twin === undefined ? -1 : earliestFree(twin, paired);
    if (twinFirst >= 0) return twinFirst;
    return bestJaccard(j, words, postings, paired);
  };
  for (let j = 0; j < outside.length; j += 1) {
    const i = pick(j);
    if (i < 0) continue;
    paired[i] = 1;
    partner[j] = i;
    byTitle[j] = 1;
  }
}

/** The earliest native finding of the group with the highest Jaccard >= 0.5, or -1. */
function bestJaccard(j: number, words: readonly string[], postings: Map<string, WordGroup[]>, paired: Uint8Array): number {
  const mine = new Set(words);
  let best = -1;
  let bestShared = 0;
  let bestUnion = 1;
  for (const w of words.slice(0, prefixLength(words.length))) {
    const list = postings.get(w);
    if (list === undefined) continue;
    let kept = 0;
    for (const group of list) {
      const first = earliestFree(group, paired);
      // A group with every member paired leaves the list for good.
      if (first < 0) continue;
      list[kept++] = group;
      if (group.seen === j) continue;
      group.seen = j;
      const size = group.words.length;
      // Jaccard >= 0.5 needs the smaller set at least half the larger.
      if (2 * size < words.length || size > 2 * words.length) continue;
      let shared = 0;
      for (const x of group.words) if (mine.has(x)) shared += 1;
      const union = words.length + size - shared;
      if (2 * shared < union) continue;
      const higher = shared * bestUnion - bestShared * union;
      if (best < 0 || higher > 0 || (higher === 0 && first < best)) {
        best = first;
        bestShared = shared;
        bestUnion = union;
      }
    }
    list.length = kept;
  }
  return best;
}

function pairByPlace(native: readonly ConsensusInput[], outside: readonly ConsensusInput[], paired: Uint8Array, partner: Int32Array): void {
  const byFile = new Map<string, Map<number, Queue>>();
  native.forEach((f, i) => {
    const at = placeOf(f);
    if (at === null || paired[i] === 1) return;
    const lines = getOrAdd(byFile, at.file, () => new Map<number, Queue>());
    getOrAdd(lines, at.line, () => ({ members: [], at: 0 })).members.push(i);
  });
  outside.forEach((f, j) => {
    const at = partner[j] === -1 ? placeOf(f) : null;
    const lines = at === null ? undefined : byFile.get(at.file);
    if (at === null || lines === undefined) return;
    // Hint: at most 21 line buckets per probe, however many findings share a line.
    for (let d = 0; d <= NEAR_LINES; d += 1) {
      const below = lines.get(at.line - d);
      const above = d === 0 ? undefined : lines.get(at.line + d);
      const a = below === undefined ? -1 : earliestFree(below, paired);
      const b = above === undefined ? -1 : earliestFree(above, paired);
      const i = a < 0 ? b : b < 0 ? a : Math.min(a, b);
      if (i < 0) continue;
      paired[i] = 1;
      partner[j] = i;
      return;
    }
  });
}

/** The finding's file and line, or null when either is missing or the line is no integer. */
function placeOf(f: ConsensusInput): { file: string; line: number } | null {
  if (f.file === undefined || f.line === undefined || !Number.isSafeInteger(f.line)) return null;
  const file = normaliseFile(f.file);
  return file === '' ? null : { file, line: f.line };
}

/** `src\a.ts`, `./src/a.ts` and `src//./a.ts` are one file; `..` is left alone. */
export function normaliseFile(file: string): string {
  let f = file.trim().replace(/\\/g, '/').replace(/\/{2,}/g, '/').replace(/\/(?:\.\/)+/g, '/');
  while (f.startsWith('./')) f = f.slice(2);
  return f;
}

function getOrAdd<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}
