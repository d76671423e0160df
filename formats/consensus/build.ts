import { SEVERITIES } from '../schemas/findings.ts';
import { pairFindings } from './pairing.ts';
import type { Consensus, ConsensusEntry, ConsensusInput, Severity, Verdict } from './types.ts';

const RANK = new Map<Severity, number>(SEVERITIES.map((s, i) => [s, i]));

/**
 * Reconciles one phase's two voices. Finding ids are taken as given (the store mints
 * unique ones). Pairing is one-to-one and deterministic:
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
  const { paired, partner, byTitle } = pairFindings(native, outside);

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
