import type { LaneProgress } from '../../formats/crew/record.ts';
import type { SpendRecord } from '../../formats/review/run-record.ts';

/** What one lane's calls cost: reviewers, observers and agent turns, and the calls whose cost is unknown. */
export interface LaneCost {
  readonly reviewUsd: number;
  readonly observerUsd: number;
  readonly agentUsd: number;
  readonly usd: number;
  /** Calls that ended with no known cost (no price for their model, or not a preset). */
  readonly unpriced: number;
}

/** The lane's cost from its progress and its review run's ledger (null: no run yet). */
export function laneCost(progress: Pick<LaneProgress, 'agentUsd' | 'observerUsd' | 'unpriced'>, review: Pick<SpendRecord, 'spent' | 'unknown_n'> | null): LaneCost {
  const reviewUsd = review?.spent ?? 0;
  const observerUsd = progress.observerUsd ?? 0;
  const agentUsd = progress.agentUsd ?? 0;
  return { reviewUsd, observerUsd, agentUsd, usd: round(reviewUsd + observerUsd + agentUsd), unpriced: (review?.unknown_n ?? 0) + (progress.unpriced ?? 0) };
}

/**
 * The lane's observer spend and unpriced calls after QA steps: each step's observer calls
 * added (a step that ran none adds nothing).
 */
export function observerCharge(
  progress: Pick<LaneProgress, 'observerUsd' | 'unpriced'>,
  ...steps: readonly { readonly usd?: number | undefined; readonly unpriced?: number | undefined }[]
): Pick<LaneProgress, 'observerUsd' | 'unpriced'> {
  const usd = steps.reduce((sum, step) => sum + (step.usd ?? 0), 0);
  const unpriced = steps.reduce((sum, step) => sum + (step.unpriced ?? 0), 0);
  return {
    ...(usd === 0 && progress.observerUsd === undefined ? {} : { observerUsd: round((progress.observerUsd ?? 0) + usd) }),
    ...(unpriced === 0 && progress.unpriced === undefined ? {} : { unpriced: (progress.unpriced ?? 0) + unpriced }),
  };
}

function round(usd: number): number {
  return Math.round(usd * 1e8) / 1e8;
}
