import type { Outcome } from '../../workers/supervise/outcome.ts';
import { finishedWork } from '../../workers/supervise/outcome.ts';
import type { OutcomeFacts } from './voice-outcome.ts';

/** The facts of a supervision that the journal keeps and the progress line shows. */
export function outcomeFacts(outcome: Outcome, usd: number | null = null): OutcomeFacts {
  const provider = outcome.provider;
  return {
    ...(provider === null
      ? {}
      : {
          session: provider.sessionId,
          usage: provider.usage,
          cost_usd: usd,
          ...(provider.rateLimit === null ? {} : { rate_limit: { status: provider.rateLimit.status, retry_after_s: provider.rateLimit.retryAfterS } }),
        }),
    status: outcome.status,
    code: outcome.code,
    child_exit: outcome.childExitCode,
    signal: outcome.signal,
    stderr: [...outcome.stderrTail],
    provider_started: outcome.providerStarted,
    marks: outcome.marks,
    duration_ms: Math.round(outcome.durationMs),
    cleanup_confirmed: outcome.cleanupConfirmed,
  };
}

/**
 * What a plan run does with an attempt's supervised end: bind its result (it finished its
 * work); leave it open (cancelled before its provider started: nothing went out); give it
 * up as cancelled by us (its voice gets a fresh attempt); or fail its voice, `unavailable`
 * when its provider never started.
 */
export type OutcomeVerdict = { readonly verdict: 'bind' } | { readonly verdict: 'open' } | { readonly verdict: 'cancelled' } | { readonly verdict: 'fail'; readonly status: 'failed' | 'unavailable'; readonly code: string };

export function outcomeVerdict(outcome: Outcome): OutcomeVerdict {
  if (finishedWork(outcome)) return { verdict: 'bind' };
  // Only this run cancels its children (an interruption, or a sibling that broke): that is
  // no failure of the provider.
  if (outcome.code === 'CANCELLED') return outcome.providerStarted ? { verdict: 'cancelled' } : { verdict: 'open' };
  return { verdict: 'fail', status: outcome.providerStarted ? 'failed' : 'unavailable', code: outcome.code ?? 'INTERNAL' };
}

/** The journaled detail of a voice that failed under supervision. */
export function failureDetail(action: string, outcome: Outcome, durationMs: number): string {
  const limited = outcome.provider?.rateLimit;
  const why = limited == null ? '' : `, rate limited (${limited.status ?? '?'}${limited.retryAfterS === null ? '' : `, retry after ${limited.retryAfterS} s`})`;
  return `action ${action} (${outcome.timeoutMode ?? 'refused'}) after ${durationMs} ms, child exit ${outcome.childExitCode ?? '-'}, marks ${outcome.marks}${why}`;
}

/** The journaled reason of an attempt this run cancelled after its provider started. */
export function cancelDetail(outcome: Outcome, durationMs: number): string {
  return `cancelled by this plan run (${outcome.cancelSignal ?? 'SIGTERM'}) after ${durationMs} ms`;
}
