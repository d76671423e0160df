import type { CallCode } from '../../formats/console/snapshot.ts';
import { isOwnerWaiting, stderrSuffix, type LaneProgress } from '../../formats/crew/record.ts';
import { oneLine } from '../../formats/text/one-line.ts';
import type { LaneCost } from './lane-cost.ts';

/** A lane's typed call ends the CREW_LANE: line names at most (the report and the lane's story have them all). */
const CALLS_IN_LINE = 8;

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
    ...(p.failedCall == null ? {} : { failed_call: { call: p.failedCall.call, code: p.failedCall.code, exit_code: p.failedCall.exitCode, signal: p.failedCall.signal, stderr: [...p.failedCall.stderr] } }),
  };
}

/**
 * A lane's CREW_LANE: line; a failed lane's detail ends with the advice that retries it,
 * an interrupted lane's with the command that continues it (`resume`, when given), each
 * runnable as printed. `cost_usd` is every call of the lane (reviewers, observers, agent
 * turns) as their streams reported it; `unpriced` its calls of unknown cost.
 */
export function laneLine(p: LaneProgress, advice: string, facts: LaneFacts & { readonly resume?: string; readonly answer?: string }): string {
  const calls = facts.calls ?? [];
  const code = p.code === null ? '' : ` code=${oneLine(p.code)}`;
  // A failed lane stays failed until it is retried, an interrupted one stopped until its
  // crew is started again: the line says how, runnable as written.
  const waiting = isOwnerWaiting(p);
  const retry =
    p.stage === 'failed' ? `; retry: ${advice}`
    : waiting && facts.answer !== undefined ? `; answer: ${facts.answer}`
    : p.stage === 'interrupted' && facts.resume !== undefined ? `; resume: ${facts.resume}`
    : '';
  // The failed call's last stderr line ends the detail, after the advice: it is the line a reader looks for.
  const evidence = stderrSuffix(p.failedCall);
  const why = p.detail ?? p.code ?? 'failed';
  const told = evidence !== '' && why.endsWith(evidence) ? why.slice(0, why.length - evidence.length) : why;
  const detail = p.detail === null && retry === '' ? '' : ` detail=${oneLine(`${told}${retry}${evidence !== '' && why.endsWith(evidence) ? evidence : ''}`)}`;
  const branch = p.branch == null ? '' : ` branch=${oneLine(p.branch)} head=${oneLine(p.head ?? '-')}`;
  // Every value escaped, the crew file's and the store's alike: a line is one line that reads as it is.
  // Each call that ended typed, <call>:<CODE>, even where its result stood (PROVIDER_NO_EXIT).
  const shown = calls.slice(0, CALLS_IN_LINE).map((c) => `${c.call}:${c.code}`);
  const typed = calls.length === 0 ? '' : ` call_codes=${oneLine([...shown, ...(calls.length > shown.length ? [`+${calls.length - shown.length}`] : [])].join(','))}`;
  const cost = ` cost_usd=${facts.cost.usd.toFixed(6)} unpriced=${facts.cost.unpriced}`;
  return `CREW_LANE: lane=${oneLine(p.lane)} status=${waiting ? 'waiting' : p.stage}${code} attempts=${p.attempts} turns=${p.turnsDone}${cost} run=${oneLine(p.runDir)}${branch}${typed}${detail}`;
}
