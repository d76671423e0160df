/**
 * What one stdout line means for the lease.
 *
 * - `mark`: the line admitted `count` (>= 1) content-free marks, each of which renews the
 *   lease. `count` exceeds 1 only when one line opens or closes several identities (a
 *   Claude message carrying several tool_use blocks).
 * - `ignore`: prose, a duplicate, a malformed or anonymous event; never renews.
 * - `terminal`: the provider's own end-of-run event; completion evidence, never a mark.
 * - `invalid`: the source broke its own monotonic sequence (PROGRESS_INVALID); the
 *   supervisor fails closed.
 */
export type Verdict =
  | { readonly kind: 'mark'; readonly count: number }
  | { readonly kind: 'ignore' }
  | { readonly kind: 'terminal' }
  | { readonly kind: 'invalid'; readonly reason: string };

/** Turns a child's stdout, one line at a time, into admitted progress marks. */
export interface ProgressTracker {
  /** Feeds one complete stdout line (without its newline). Never throws. */
  feed(line: string): Verdict;
  /** Marks admitted so far (the sum of every `mark` verdict's `count`). */
  readonly marks: number;
}

