import { SEVERITIES } from './schemas/findings.ts';
import { normaliseTitle, titleWords } from './title-match.ts';

export { normaliseTitle, titlesMatch, titleWords } from './title-match.ts';
export { renderConsensusMarkdown } from './consensus-render.ts';

export type Severity = (typeof SEVERITIES)[number];

/** One finding of one voice, as consensus needs it (a findings row fits). */
export interface ConsensusInput {
  readonly id: string;
  readonly severity: Severity;
  readonly title: string;
  readonly file?: string | undefined;
  readonly line?: number | undefined;
}

export type Verdict = 'confirmed' | 'unverified' | 'disagree' | 'new';

/**
 * The verdict on one outside finding. `native` is the native finding it was paired with
 * (null for `new`); `severities` is `[outside, native]` for a pair, null for `new`.
 */
export interface ConsensusEntry {
  readonly outside: string;
  readonly verdict: Verdict;
  readonly native: string | null;
  readonly severities: readonly [Severity, Severity] | null;
}

export interface Consensus {
  readonly phase: string;
  readonly coverage: 'both' | 'native_only';
  readonly confirmed: number;
  readonly unverified: number;
  readonly disagree: number;
  readonly new: number;
  readonly native_only: number;
  /** One per outside finding, in outside order. */
  readonly entries: readonly ConsensusEntry[];
  /** Native findings no outside finding was paired with, in native order. */
  readonly native_only_ids: readonly string[];
}

/** Lines apart (inclusive) for an outside finding to sit "at" a native one. */
export const NEAR_LINES = 10;

const RANK = new Map<Severity, number>(SEVERITIES.map((s, i) => [s, i]));

/**
 * Reconciles one phase's two voices. Pairing is one-to-one and deterministic:
 *
 * 1. Titles, greedy in outside order. Each outside finding takes the earliest unpaired
 *    native finding with the same non-empty normalised title; else the unpaired native
 *    finding with the highest Jaccard index of at least 0.5, ties to the earliest. Such a
 *    pair is `confirmed`, or `disagree` when the severities are two or more levels apart.
 * 2. Places, for the outside findings left, greedy in outside order, among the native
 *    findings no title claimed: the same file (`./` and `\` aside) with both lines
 *    present and at most NEAR_LINES apart, the nearest line first, then the earliest.
 *    Such a pair is `unverified`.
 * 3. Every other outside finding is `new`; every native finding left unpaired is
 *    native-only. A native finding paired in step 2 is not native-only, so
 *    confirmed + disagree + unverified + native_only is the native count and
 *    confirmed + disagree + unverified + new the outside count.
 *
 * Titles are matched before places for all outside findings, so a later outside
 * finding's title match is never lost to an earlier one's proximity.
 *
 * `outside` null means the outside voice never bound (unavailable or failed): coverage
 * `native_only`, no entries, every native finding native-only.
 */
export function buildConsensus(
  phase: string,
  native: readonly ConsensusInput[],
  outside: readonly ConsensusInput[] | null,
): Consensus {
  if (outside === null) {
    const ids = native.map((f) => f.id);
    return { phase, coverage: 'native_only', confirmed: 0, unverified: 0, disagree: 0, new: 0, native_only: ids.length, entries: [], native_only_ids: ids };
  }
  const paired = new Uint8Array(native.length);
  const partner = new Int32Array(outside.length).fill(-1);
  const byTitle = new Uint8Array(outside.length);
  pairByTitle(native, outside, paired, partner, byTitle);
  pairByPlace(native, outside, paired, partner);

  const counts = { confirmed: 0, unverified: 0, disagree: 0, new: 0 };
  const entries = outside.map((o, j): ConsensusEntry => {
    const n = native[partner[j] ?? -1];
    if (n === undefined) {
      counts.new += 1;
      return { outside: o.id, verdict: 'new', native: null, severities: null };
    }
    const verdict: Verdict = byTitle[j] !== 1 ? 'unverified' : levelsApart(o.severity, n.severity) >= 2 ? 'disagree' : 'confirmed';
    counts[verdict] += 1;
    return { outside: o.id, verdict, native: n.id, severities: [o.severity, n.severity] };
  });
  const nativeOnly = native.filter((_, i) => paired[i] !== 1).map((f) => f.id);
  return { phase, coverage: 'both', ...counts, native_only: nativeOnly.length, entries, native_only_ids: nativeOnly };
}

/** How many levels apart two severities are (Critical > High > Medium > Low > Informational). */
export function levelsApart(a: Severity, b: Severity): number {
  return Math.abs((RANK.get(a) ?? 0) - (RANK.get(b) ?? 0));
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
