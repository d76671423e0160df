import { join } from 'node:path';
import { parseAgentTurn, type AgentTurn } from '../../formats/crew/agent-turn.ts';
import { fillArgv, type LaneSpec } from '../../formats/crew/file.ts';
import type { LaneProgress } from '../../formats/crew/record.ts';
import type { Outcome } from '../../workers/supervise/outcome.ts';
import type { SpawnedChild, SupervisionSpec } from '../../workers/supervise/spec.ts';
import { findLiveByEnv } from '../../workers/supervise/find-by-env.ts';
import type { ChildRecord } from '../../formats/supervision/child-record.ts';
import { childRecord, childRuns } from '../dispatch/orphans.ts';
import { settleChild } from './orphan-sweep.ts';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import { makeDirs } from '../fs/make-dirs.ts';
import { tryReadBounded } from '../fs/read-bounded.ts';
import type { LaneContext } from './lane-context.ts';
import type { StepResult } from './ports.ts';

const MAX_TURN_BYTES = 256 * 1024;

type Save = (changes: Partial<LaneProgress>) => Promise<void>;
/** The lane's saves: awaited until committed, or write-behind (see driveLane). */
interface Saves {
  readonly save: Save;
  readonly advance: (changes: Partial<LaneProgress>) => void;
}
type End = (step: StepResult) => Promise<void>;

/** What ingesting one turn decided: the lane's typed end, or the progress to save. */
type Ingested = { readonly end: StepResult } | { readonly changes: Partial<LaneProgress> };

/**
 * Agent turns until the agent reports finish. Each turn is journaled as dispatched before
 * its agent starts and is never run a second time. A turn dispatched before a crash whose
 * end was never ingested is ingested when the crew is started again: its orphan may have
 * changed the worktree, so it is never dropped (see {@link ingestTurn}).
 */
export async function work(ctx: LaneContext, lane: LaneSpec, qaId: string, progress: LaneProgress, saves: Saves, end: End): Promise<void> {
  const { save, advance } = saves;
  if (progress.turnsDispatched > progress.turnsDone) {
    // Its agent may still run, orphaned: it is settled (adopted to its end, or torn down
    // with proof) before its result is read and before another turn starts in the worktree.
    const settled = await settleTurnOrphan(ctx, lane, progress);
    if (!settled.ok) return end(settled);
    const resumed = await ingestTurn(ctx, lane, qaId, progress, progress.turnsDispatched, null);
    return 'end' in resumed ? end(resumed.end) : advance(resumed.changes);
  }
  if (progress.turnsDone - (progress.turnBase ?? 0) >= ctx.agentTurns) {
    await end({ ok: false, code: 'AGENT_TURNS_EXHAUSTED', detail: `${progress.turnsDone} turns without a finish that passed its cross-check`, attempts: 0 });
    return;
  }
  const n = progress.turnsDispatched + 1;
  const files = turnFiles(progress, n);
  makeDirs(join(progress.runDir, 'agent'));
  writeFileAtomic(files.prompt, agentPrompt(lane, n, progress.guidance, files.result), 0o644, false);
  // Journaled once the slot is granted, right before the agent starts: a turn still queued
  // when the crew was killed never started, and runs when the crew is started again. Its
  // child is journaled (and counted) at its spawn, for a crew started after this one died.
  const base = ctx.actions.spec('agent', fillArgv(lane.runners.agent, { prompt: files.prompt, result: files.result, lane: lane.id }));
  // The result file names the turn: a crew started after this one died finds the agent by it.
  const spec = { ...base, env: { ...base.env, LANEWARD_PROMPT_FILE: files.prompt, LANEWARD_RESULT_FILE: files.result } };
  const onSlot = () => save({ turnsDispatched: n, turnChild: null });
  const onSpawn = (child: SpawnedChild) => save({ turnChild: childRecord(spec, child), attempts: progress.attempts + 1 });
  const outcome = await ctx.run(spec, { onSlot, onSpawn });
  if (progress.turnsDispatched < n) return end({ ok: false, code: outcome.code ?? 'CANCELLED', detail: `agent turn ${n} never started`, attempts: 0 });
  // Saved behind: a crash before its commit leaves the turn dispatched and not done, and
  // the crew started again ingests it anew (its QA turns are keyed, never recorded twice).
  const ingested = await ingestTurn(ctx, lane, qaId, progress, n, outcome);
  return 'end' in ingested ? end(ingested.end) : advance(ingested.changes);
}

/**
 * Records turn `n` with QA: its prompt as the user turn, the agent's result as the
 * assistant turn. `outcome` null: the turn was dispatched before a crash and its end was
 * never seen; a result that parses is ingested as if the turn had ended, a missing or bad
 * one becomes a diff-bearing turn of unknown content, listed in `lostTurns`, so QA reviews
 * it. Each QA turn is keyed by the agent turn: a crash mid-ingest never records one twice.
 */
async function ingestTurn(ctx: LaneContext, lane: LaneSpec, qaId: string, progress: LaneProgress, n: number, outcome: Outcome | null): Promise<Ingested> {
  const files = turnFiles(progress, n);
  const user = await ctx.qa.turn(qaId, 'user', agentPrompt(lane, n, progress.guidance, files.result), false, `agent-${n}-user`);
  if (!user.ok) return { end: user };
  if (outcome !== null && outcome.status !== 'ok') return { end: { ok: false, code: outcome.code, detail: `agent turn ${n}: ${outcome.status}`, attempts: 0 } };
  const read = tryReadBounded(files.result, MAX_TURN_BYTES);
  const parsed = read.ok ? parseAgentTurn(read.bytes) : `the turn result ${read.detail}`;
  if (typeof parsed === 'string' && outcome !== null) return { end: { ok: false, code: 'AGENT_RESULT_INVALID', detail: `turn ${n}: ${parsed}`, attempts: 0 } };
  const turn: AgentTurn =
    typeof parsed === 'string'
      ? { text: `agent turn ${n} was running when the crew stopped and its end was never seen (${parsed}): what it changed is unknown, review the worktree`, diff: true, finish: false }
      : parsed;
  const assistant = await ctx.qa.turn(qaId, 'assistant', turn.text, turn.diff, `agent-${n}-assistant`);
  if (!assistant.ok) return { end: assistant };
  return {
    changes: {
      turnsDone: n,
      attempts: progress.attempts + assistant.attempts + user.attempts,
      guidance: assistant.guidance ?? user.guidance ?? null,
      stage: turn.finish ? 'cross-check' : 'work',
      ...(typeof parsed === 'string' ? { lostTurns: [...progress.lostTurns, n] } : {}),
    },
  };
}

/**
 * The agent of a turn that a crew which died dispatched, if it still runs: awaited where
 * the crew's sweep settles it already, else adopted or torn down here, under the crew's
 * dispatcher (an adoption holds a slot), before the turn is ingested. An agent whose spawn
 * the dead crew never journaled is found by the result file its environment names. Not ok
 * only when a teardown could not prove it gone.
 */
async function settleTurnOrphan(ctx: LaneContext, lane: LaneSpec, progress: LaneProgress): Promise<StepResult> {
  await ctx.orphans?.agent(lane.id);
  const base = ctx.actions.spec('agent', []);
  const child = progress.turnChild ?? unjournaledAgent(base, progress);
  if (child === undefined || !childRuns(child)) return { ok: true, code: null, detail: null, attempts: 0 };
  const confirmed = await settleChild(child, base, ctx.run);
  if (confirmed) return { ok: true, code: null, detail: null, attempts: 0 };
  return { ok: false, code: 'TEARDOWN_UNPROVEN', detail: `the agent of turn ${progress.turnsDispatched} (pid ${child.pid}), left by a crew that died, could not be proven gone`, attempts: 0 };
}

function unjournaledAgent(base: SupervisionSpec, progress: LaneProgress): ChildRecord | undefined {
  const live = findLiveByEnv('LANEWARD_RESULT_FILE', turnFiles(progress, progress.turnsDispatched).result);
  return live === undefined ? undefined : { ...childRecord(base, { pid: live.pid, ticks: live.ticks, budgetLeftMs: 0 }), pgid: live.pgid };
}

function turnFiles(progress: LaneProgress, n: number): { prompt: string; result: string } {
  const dir = join(progress.runDir, 'agent');
  return { prompt: join(dir, `turn-${n}.prompt.md`), result: join(dir, `turn-${n}.json`) };
}

function agentPrompt(lane: LaneSpec, n: number, guidance: string | null, result: string): string {
  return [
    `# Lane ${lane.id}, turn ${n}`,
    '',
    `Plan: ${lane.plan}`,
    `Observer guidance: ${guidance ?? 'none'}`,
    '',
    'Work on the plan. When this turn is done, write one JSON object to:',
    result,
    '{"text": "<what you did>", "diff": <true if files changed>, "finish": <true when the work is done>}',
    '',
  ].join('\n');
}
