import type { OrphanEnd } from '../../formats/supervision/child-record.ts';

/** What a resumed attempt's settlement found, as plain facts. */
export interface OrphanFindings {
  /** How its child was settled; undefined when the attempt has no child. */
  readonly end: OrphanEnd | undefined;
  /** Whether a child of it was ever journaled. */
  readonly childJournaled: boolean;
  /** Whether its result file exists (written by its provider, or settled from its stream). */
  readonly found: boolean;
  /** How its stream ended; null when it says nothing. */
  readonly told: 'done' | 'PROVIDER_RATE_LIMITED' | 'CHILD_FAILED' | null;
}

/**
 * What a plan run does with an attempt an earlier driver dispatched and never saw end,
 * never starting it twice: `dispatch` one that never spawned; `bind` the result it left;
 * `stream_failed` one whose stream ended in an error; `mint` a voice anew for one cancelled
 * by us and proven gone; else a typed failure: `teardown_unproven`, `adopted_failed`
 * (adopted, it ended with a code), `unknown` (it ran and left no result: EXECUTION_UNKNOWN).
 */
export type OrphanVerdict =
  | { readonly verdict: 'dispatch' | 'bind' | 'mint' | 'teardown_unproven' | 'unknown' }
  | { readonly verdict: 'stream_failed'; readonly code: 'PROVIDER_RATE_LIMITED' | 'CHILD_FAILED' }
  | { readonly verdict: 'adopted_failed'; readonly code: string };

export function orphanVerdict(f: OrphanFindings): OrphanVerdict {
  const { end } = f;
  if (end === undefined && !f.childJournaled && !f.found) return { verdict: 'dispatch' };
  if (f.found) return { verdict: 'bind' };
  if (f.told === 'CHILD_FAILED' || f.told === 'PROVIDER_RATE_LIMITED') return { verdict: 'stream_failed', code: f.told };
  // Cancelled by us (torn down, or an adoption the crew cancelled), proven gone, nothing
  // bound: its voice is minted anew, as a crew does for the children it cancels.
  const cancelledByUs = end !== undefined && (end.how === 'torn_down' || (end.how === 'adopted' && end.code === 'CANCELLED'));
  if (cancelledByUs && end.cleanup_confirmed) return { verdict: 'mint' };
  if (end?.how === 'torn_down') return { verdict: 'teardown_unproven' };
  if (end?.how === 'adopted' && end.code !== null) return { verdict: 'adopted_failed', code: end.code };
  return { verdict: 'unknown' };
}
