import type { CallCode } from '../../formats/console/snapshot.ts';
import { isOwnerWaiting, type LaneProgress } from '../../formats/crew/record.ts';
import type { LaneCost } from './lane-cost.ts';

/** What a lane's line and object say beside its progress: what its calls cost, and those that ended with a code. */
export interface LaneFacts {
  readonly cost: LaneCost;
  readonly calls?: readonly CallCode[];
}

/** A lane as --json and --report give it, with what its calls cost and its calls that ended with a code when given. */
export function laneObject(p: LaneProgress, facts: LaneFacts): Record<string, unknown> {
  return {
    lane: p.lane,
    // A lane parked at its gate for its owner is not interrupted by anyone: it waits.
    status: isOwnerWaiting(p) ? 'waiting' : p.stage,
    code: p.code,
    detail: p.detail,
    attempts: p.attempts,
    turns: p.turnsDone,
    lost_turns: p.lostTurns,
    run: p.runDir,
    ...(p.branch == null ? {} : { branch: p.branch, head: p.head ?? null, worktree: p.worktree ?? null }),
    ...(p.session == null ? {} : { agent_session: p.session }),
    ...(p.agentUsd === undefined ? {} : { agent_usd: p.agentUsd }),
    review_usd: facts.cost.reviewUsd,
    observer_usd: facts.cost.observerUsd,
    cost_usd: facts.cost.usd,
    unpriced: facts.cost.unpriced,
    ...(facts.calls === undefined ? {} : { call_codes: facts.calls.map((c) => ({ call: c.call, kind: c.kind, code: c.code })) }),
    // The call the lane failed on, with what it left: its exit status or signal and its stderr's end.
    // What the agent sandbox refused of each turn, and refs that moved during it.
    ...(p.sandboxRefusals === undefined ? {} : { sandbox_refusals: p.sandboxRefusals.map((r) => ({ turn: r.turn, read_only_writes: r.readOnlyWrites, refs_moved: [...r.refsMoved], contained: r.contained })) }),
    ...(p.failedCall == null ? {} : { failed_call: { call: p.failedCall.call, code: p.failedCall.code, exit_code: p.failedCall.exitCode, signal: p.failedCall.signal, stderr: [...p.failedCall.stderr] } }),
  };
}
