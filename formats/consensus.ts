// TEMP STUB (lead): replaced by the helper's implementation at merge.
import type { SEVERITIES } from './schemas/findings.ts';
type Severity = (typeof SEVERITIES)[number];
export interface ConsensusInput { readonly id: string; readonly severity: Severity; readonly title: string; readonly file?: string; readonly line?: number }
export type Verdict = 'confirmed' | 'unverified' | 'disagree' | 'new';
export interface ConsensusEntry { readonly outside: string; readonly verdict: Verdict; readonly native: string | null; readonly severities: readonly [Severity, Severity] | null }
export interface Consensus {
  readonly phase: string;
  readonly coverage: 'both' | 'native_only';
  readonly confirmed: number; readonly unverified: number; readonly disagree: number; readonly new: number; readonly native_only: number;
  readonly entries: readonly ConsensusEntry[];
  readonly native_only_ids: readonly string[];
}
export function buildConsensus(phase: string, native: readonly ConsensusInput[], outside: readonly ConsensusInput[] | null): Consensus {
  const entries = (outside ?? []).map((o) => ({ outside: o.id, verdict: 'new' as const, native: null, severities: null }));
  return { phase, coverage: outside === null ? 'native_only' : 'both', confirmed: 0, unverified: 0, disagree: 0, new: entries.length, native_only: native.length, entries, native_only_ids: native.map((n) => n.id) };
}
export function renderConsensusMarkdown(c: Consensus, _titles: ReadonlyMap<string, string>): string { return `# ${c.phase}\n`; }
