import type { Outcome } from '../../workers/supervise/outcome.ts';
import type { SupervisionSpec } from '../../workers/supervise/spec.ts';
import { createPoolDispatcher, type DispatchStats } from '../dispatch/dispatcher.ts';

/**
 * Supervises many providers across the pool through one dispatcher: at most `limit` at
 * once (default: all of them), the rest queued in order. `cancel` reaches every running
 * supervision as a message (each worker tears its own children down) and drops every
 * queued one, which then starts nothing. Without a limit every budget runs from its
 * spec's startedAt (pool start-up is pre-launch work and counts); with a limit below the
 * count, a queued child's budget runs from its slot: waiting behind other children is
 * not the child's time.
 */
export async function superviseMany(
  specs: readonly SupervisionSpec[],
  options: { threads: number; limit?: number; cancel?: AbortSignal; onOutcome?: (index: number, outcome: Outcome) => void; onStats?: (stats: DispatchStats) => void },
): Promise<Outcome[]> {
  const limit = options.limit ?? Math.max(1, specs.length);
  const budgetFromSlot = limit < specs.length;
  const dispatcher = await createPoolDispatcher({ threads: options.threads, limit });
  try {
    return await Promise.all(
      specs.map(async (spec, index) => {
        const outcome = await dispatcher.supervise(spec, { budgetFromSlot, ...(options.cancel === undefined ? {} : { cancel: options.cancel }) });
        options.onOutcome?.(index, outcome);
        return outcome;
      }),
    );
  } finally {
    options.onStats?.(dispatcher.stats());
    await dispatcher.close();
  }
}
