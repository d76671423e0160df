import type { LaneProgress } from '../../formats/crew/record.ts';
import { oneLine } from '../../formats/text/one-line.ts';
import type { LaneCost } from './lane-cost.ts';

/** A lane as --json and --report give it, with what its calls cost. */
export function laneObject(p: LaneProgress, cost: LaneCost): Record<string, unknown> {
  return {
    lane: p.lane,
    status: p.stage,
    code: p.code,
    detail: p.detail,
    attempts: p.attempts,
    turns: p.turnsDone,
    lost_turns: p.lostTurns,
    run: p.runDir,
    ...(p.branch == null ? {} : { branch: p.branch, head: p.head ?? null, worktree: p.worktree ?? null }),
    ...(p.session == null ? {} : { agent_session: p.session }),
    ...(p.agentUsd === undefined ? {} : { agent_usd: p.agentUsd }),
    review_usd: cost.reviewUsd,
    observer_usd: cost.observerUsd,
    cost_usd: cost.usd,
    unpriced: cost.unpriced,
  };
}

/**
 * A lane's CREW_LANE: line; a failed lane's detail ends with the advice that retries it,
 * runnable as printed. `cost_usd` is every call of the lane (reviewers, observers, agent
 * turns) as their streams reported it; `unpriced` its calls of unknown cost.
 */
export function laneLine(p: LaneProgress, advice: string, cost: LaneCost): string {
  const code = p.code === null ? '' : ` code=${p.code}`;
  // A failed lane stays failed until it is retried: the line says how, runnable as written.
  const retry = p.stage === 'failed' ? `; retry: ${advice}` : '';
  const detail = p.detail === null && retry === '' ? '' : ` detail=${oneLine(`${p.detail ?? p.code ?? 'failed'}${retry}`)}`;
  const branch = p.branch == null ? '' : ` branch=${p.branch} head=${p.head ?? '-'}`;
  return `CREW_LANE: lane=${p.lane} status=${p.stage}${code} attempts=${p.attempts} turns=${p.turnsDone} cost_usd=${cost.usd.toFixed(6)} unpriced=${cost.unpriced} run=${oneLine(p.runDir)}${branch}${detail}`;
}
