import type { SEVERITIES } from '../schemas/findings.ts';

/** The records of one phase's consensus: what the two voices' findings were found to be. */

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

