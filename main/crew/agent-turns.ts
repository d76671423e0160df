import { join } from 'node:path';
import { isLanewardError } from '../../formats/codes/error.ts';
import { parseAgentTurn, type AgentTurn } from '../../formats/crew/agent-turn.ts';
import type { LaneSpec } from '../../formats/crew/file.ts';
import { isPresetRunner } from '../../formats/providers/runner.ts';
import type { ProviderFacts } from '../../formats/providers/facts.ts';
import { finishedWork } from '../../workers/supervise/outcome.ts';
import { streamFacts } from '../providers/stream-facts.ts';
import { turnFiles, turnSpec } from './turn-spec.ts';
import { costOf } from '../providers/cost.ts';
import { PRESETS } from '../../formats/providers/presets.ts';
import { existsSync } from 'node:fs';
import { exitText, stderrSuffix, withSandboxRefusal, withTurnCall, withTurnEnd, type LaneProgress, type SandboxRefusal } from '../../formats/crew/record.ts';
import { turnCallOf } from './turn-evidence.ts';
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
import { observerCharge } from './lane-cost.ts';
import { containsAgent, laneContained, refsBefore, turnRefusal } from '../sandbox/lane-sandbox.ts';
import type { Refs } from '../sandbox/turn-refusals.ts';

const MAX_TURN_BYTES = 256 * 1024;

type Save = (changes: Partial<LaneProgress>) => Promise<void>;
/** The lane's saves: awaited until committed, or write-behind (see driveLane). */
interface Saves {
  readonly save: Save;
  readonly advance: (changes: Partial<LaneProgress>) => void;
}
type End = (step: StepResult) => Promise<void>;

/** What ingesting one turn decided: the lane's typed end, or the progress to save. */
type Ingested = { readonly end: StepResult; readonly changes?: Partial<LaneProgress> } | { readonly changes: Partial<LaneProgress> };

/**
 * Agent turns until the agent reports finish. Each turn is journaled as dispatched before
 * its agent starts and is never run a second time. A turn dispatched before a crash whose
 * end was never ingested is ingested when the crew is started again: its orphan may have
 * changed the worktree, so it is never dropped (see {@link ingestTurn}).
 */
export async function work(ctx: LaneContext, lane: LaneSpec, qaId: string, progress: LaneProgress, saves: Saves, end: End): Promise<void> {
  const { save, advance } = saves;
  const settle = (ingested: Ingested): Promise<void> | void => {
    if (!('end' in ingested)) return advance(ingested.changes);
    if (ingested.changes !== undefined) Object.assign(progress, ingested.changes);
    return end(ingested.end);
  };
  if (progress.turnsDispatched > progress.turnsDone) {
    // Its agent may still run, orphaned: it is settled (adopted to its end, or torn down
    // with proof) before its result is read and before another turn starts in the worktree.
    const settled = await settleTurnOrphan(ctx, lane, progress);
    if (!settled.ok) return end(settled);
    // What its sandbox refused is read from its stream; the refs it found are not known.
    return settle(withRefusal(progress, await ingestTurn(ctx, lane, qaId, progress, progress.turnsDispatched, null), await turnRefusal(ctx.workspace === undefined ? undefined : ctx.sandbox, progress.turnsDispatched, null, turnFiles(progress, progress.turnsDispatched).stream)));
  }
  if (progress.turnsDone - (progress.turnBase ?? 0) >= ctx.agentTurns) {
    await end({ ok: false, code: 'AGENT_TURNS_EXHAUSTED', detail: `${progress.turnsDone} turns without a finish that passed its cross-check`, attempts: 0 });
    return;
  }
  if (ctx.workspace !== undefined) {
    // Made or found again each turn: a crew started again after a crash reuses it.
    const made = await ctx.workspace.prepare(lane.id, progress.branch ?? null);
    if (progress.worktree !== made.worktree) await save({ worktree: made.worktree, branch: made.branch, head: await ctx.workspace.head(made.worktree) });
    // Back from the merge train: laneward merges the base in (uncommitted, conflicts marked)
    // before the first turn back, whose prompt says what the train said. Saved once done: a
    // crew killed before finds the merge under way and takes it as it stands.
    const reopen = progress.reopen;
    if (reopen != null && !reopen.merged && ctx.land !== undefined) {
      const brought = await ctx.land.bringBase(made.worktree, reopen);
      await save({ reopen: { ...reopen, merged: true, conflicts: brought.conflicts }, guidance: brought.guidance });
    }
  }
  const n = progress.turnsDispatched + 1;
  // A preset agent in a worktree runs under the crew's sandbox, its CLI's own sandbox off inside it.
  const contained = containsAgent(ctx.sandbox, lane, ctx.workspace === undefined ? null : progress.worktree);
  const turn = turnSpec(ctx.actions, lane, progress, n, contained);
  const files = turn.files;
  makeDirs(join(progress.runDir, 'agent'));
  writeFileAtomic(files.prompt, agentPrompt(lane, n, progress.guidance, files.result), 0o644, false);
  // Journaled once the slot is granted, right before the agent starts: a turn still queued
  // when the crew was killed never started, and runs when the crew is started again. Its
  // child is journaled (and counted) at its spawn, for a crew started after this one died.
  const open: SupervisionSpec = {
    ...turn.spec,
    ...(ctx.workspace === undefined || progress.worktree == null ? {} : { cwd: progress.worktree }),
  };
  const spec = contained ? laneContained(ctx.sandbox!, open, progress.worktree!, progress.runDir) : open;
  // The repository's refs as the turn found them at its slot, right before its agent
  // starts: what moved while it ran goes in the lane's record.
  let refs: Refs | null = null;
  const onSlot = async () => {
    if (ctx.workspace !== undefined) refs = await refsBefore(ctx.sandbox);
    await save({ turnsDispatched: n, turnChild: null });
  };
  const onSpawn = (child: SpawnedChild) => save({ turnChild: childRecord(spec, child), attempts: progress.attempts + 1 });
  // The crew's cap is charged this turn's own cost: a resumed session's running total less
  // what the lane's earlier turns of it were charged.
  const charge = (ended: Outcome) => turnCost(lane, isPresetRunner(lane.runners.agent) ? ended.provider : null, progress, ctx).turnUsd;
  const outcome = await ctx.supervise(spec, { onSlot, onSpawn, charge });
  if (progress.turnsDispatched < n) return end({ ok: false, code: outcome.code ?? 'CANCELLED', detail: `agent turn ${n} never started`, attempts: 0 });
  // Saved behind: a crash before its commit leaves the turn dispatched and not done, and
  // the crew started again ingests it anew (its QA turns are keyed, never recorded twice).
  const refused = await turnRefusal(ctx.workspace === undefined ? undefined : ctx.sandbox, n, refs, files.stream);
  return settle(withRefusal(progress, await ingestTurn(ctx, lane, qaId, progress, n, outcome), refused));
}

/** An ingested turn with what its sandbox refused added to the lane's record. */
function withRefusal(progress: LaneProgress, ingested: Ingested, refused: SandboxRefusal | null): Ingested {
  return refused === null ? ingested : { ...ingested, changes: { ...ingested.changes, ...withSandboxRefusal(progress, refused) } };
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
  if (!user.ok) return { end: user, changes: observerCharge(progress, user) };
  // A preset's facts: from its outcome, or read back from its kept stream after a crash.
  const facts = isPresetRunner(lane.runners.agent) ? (outcome?.provider ?? streamFacts(lane.runners.agent.preset, files.stream)) : null;
  const session = facts?.sessionId ?? progress.session ?? null;
  const { spent, sessionUsd, turnUsd } = turnCost(lane, facts, progress, ctx);
  // The call's own code stays in the lane's story, whether its result stood (PROVIDER_NO_EXIT) or not.
  // Every turn that ended keeps its call's evidence: exit status or signal, its stderr's end, duration, marks, cost.
  const call = outcome === null ? null : turnCallOf(n, outcome, files.stderr, { usd: turnUsd, session: facts?.sessionId ?? null });
  const typed = { ...withTurnEnd(progress, n, outcome?.code ?? null), ...(call === null ? {} : withTurnCall(progress, call)) };
  // A turn that ran and whose cost is unknown is counted so (the crew's cap counts it at its reservation).
  const ran = outcome === null || outcome.providerStarted;
  const unknown = ran && turnUsd === null ? { unpriced: (progress.unpriced ?? 0) + 1 } : {};
  if (outcome !== null && !finishedWork(outcome)) {
    // The session survives a failed turn: a retried lane continues it.
    // The detail says how the child ended and ends with the last line it wrote to stderr: what it said is why.
    const how = call === null ? null : exitText(call);
    const detail = `agent turn ${n}: ${outcome.status}${how === null ? '' : `, ${how}`}${stderrSuffix(call)}`;
    return { end: { ok: false, code: outcome.code ?? 'INTERNAL', detail, attempts: 0 }, changes: { session, agentUsd: spent, sessionUsd, ...typed, ...unknown, failedCall: call === null ? null : { call: call.call, code: call.code, exitCode: call.exitCode, signal: call.signal, stderr: call.stderr }, ...observerCharge({ ...progress, ...unknown }, user) } };
  }
  // What the turn cost stays charged to the lane whatever its result was.
  const paid = { session, agentUsd: spent, sessionUsd, ...typed, ...unknown, ...observerCharge({ ...progress, ...unknown }, user) };
  const worktree = ctx.workspace === undefined || progress.worktree == null ? null : progress.worktree;
  if (worktree !== null && progress.head != null) {
    // A turn too large for the crew's limits is refused before anything of it is committed
    // (commits the agent made itself are taken off the branch); the lane ends typed.
    const refused = await refusal(() => ctx.workspace!.guard(worktree, lane.id, n, progress.head!, progress.branch ?? null, progress.reopen?.merged === true ? [progress.reopen.base] : []));
    if (refused !== null) return { end: refused, changes: paid };
  }
  // Whether the turn changed files is the worktree's to say, never the agent's word.
  const changed = worktree === null ? null : await ctx.workspace!.changed(worktree, progress.head ?? null);
  // A turn whose end nobody saw takes its reply only from a stream that reached its end:
  // the last message of one cut short is not the turn's answer.
  if (facts !== null && !existsSync(files.result) && (outcome !== null || facts.finished)) {
    const made = presetTurn(facts, changed ?? true);
    if (made !== null) writeFileAtomic(files.result, `${JSON.stringify(made)}\n`, 0o600, false);
  }
  const read = tryReadBounded(files.result, MAX_TURN_BYTES);
  const parsed = read.ok ? parseAgentTurn(read.bytes) : `the turn result ${read.detail}`;
  if (typeof parsed === 'string' && outcome !== null) return { end: { ok: false, code: 'AGENT_RESULT_INVALID', detail: `turn ${n}: ${parsed}`, attempts: 0 }, changes: paid };
  const turn: AgentTurn =
    typeof parsed === 'string'
      ? { text: `agent turn ${n} was running when the crew stopped and its end was never seen (${parsed}): what it changed is unknown, review the worktree`, diff: true, finish: false }
      : parsed;
  // A diff-bearing turn is committed on the lane's branch before QA hears of it: a crash
  // after this finds the work committed (a second commit of nothing is none).
  // The lane's head is its branch's tip after the turn, whoever committed: the agent's own
  // commits, resets and amends included (a turn that left no file changed still moves it).
  const head = worktree === null ? null : changed === true ? ((await ctx.workspace!.commit(worktree, lane.id, n)) ?? (await ctx.workspace!.head(worktree))) : await ctx.workspace!.head(worktree);
  const diff = changed ?? turn.diff;
  const assistant = await ctx.qa.turn(qaId, 'assistant', turn.text, diff, `agent-${n}-assistant`);
  const observers = observerCharge({ ...progress, ...unknown }, user, assistant);
  if (!assistant.ok) return { end: assistant, changes: { session, agentUsd: spent, sessionUsd, ...typed, ...unknown, ...observers, ...(head === null ? {} : { head }) } };
  return {
    changes: {
      ...typed,
      session,
      agentUsd: spent,
      sessionUsd,
      ...unknown,
      ...observers,
      ...(head === null ? {} : { head }),
      turnsDone: n,
      attempts: progress.attempts + assistant.attempts + user.attempts,
      guidance: assistant.guidance ?? user.guidance ?? null,
      // A finish passes the repository's checks first, when the crew names them (main/crew/pregate.ts).
      stage: turn.finish ? (ctx.land === undefined ? 'cross-check' : 'pregate') : 'work',
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
  // The turn's own spec: an adopter follows the output files the agent writes.
  const base = turnSpec(ctx.actions, lane, progress, progress.turnsDispatched).spec;
  const child = progress.turnChild ?? unjournaledAgent(base, progress);
  if (child === undefined || !childRuns(child)) return { ok: true, code: null, detail: null, attempts: 0 };
  const confirmed = await settleChild(child, base, ctx.supervise);
  if (confirmed) return { ok: true, code: null, detail: null, attempts: 0 };
  return { ok: false, code: 'TEARDOWN_UNPROVEN', detail: `the agent of turn ${progress.turnsDispatched} (pid ${child.pid}), left by a crew that died, could not be proven gone`, attempts: 0 };
}

function unjournaledAgent(base: SupervisionSpec, progress: LaneProgress): ChildRecord | undefined {
  const live = findLiveByEnv('LANEWARD_RESULT_FILE', turnFiles(progress, progress.turnsDispatched).result);
  return live === undefined ? undefined : { ...childRecord(base, { pid: live.pid, ticks: live.ticks, budgetLeftMs: 0 }), pgid: live.pgid };
}

/** The line that ends a preset agent's reply when it reports the plan done. */
const FINISH_LINE = /^STATUS:\s*done\s*$/i;

/**
 * A preset agent's turn from its reply: the text, whether it changed files (`diff`, from
 * the worktree when the crew has one, never from the agent's word), and whether its last
 * line reports the work done. Null when the reply has no text.
 */
export function presetTurn(facts: ProviderFacts, diff: boolean): AgentTurn | null {
  const text = facts.finalText;
  if (text === null || text.trim() === '') return null;
  const last = text.trimEnd().split('\n').at(-1) ?? '';
  return { text: text.slice(0, 64 * 1024), diff, finish: FINISH_LINE.test(last.trim()) };
}

function agentPrompt(lane: LaneSpec, n: number, guidance: string | null, result: string): string {
  const head = [`# Lane ${lane.id}, turn ${n}`, '', `Plan: ${lane.plan}`, `Observer guidance: ${guidance ?? 'none'}`, ''];
  // A preset's reply is its turn (laneward writes the result); an argv agent writes its own.
  const ask = isPresetRunner(lane.runners.agent)
    ? ['Work on the plan in this directory. End your reply with one last line:', '`STATUS: done` when the whole plan is implemented, else `STATUS: continue`.']
    : ['Work on the plan. When this turn is done, write one JSON object to:', result, '{"text": "<what you did>", "diff": <true if files changed>, "finish": <true when the work is done>}'];
  return [...head, ...ask, ''].join('\n');
}

/**
 * The lane's agent spend after this turn: the turn's own cost added. A preset whose
 * stream reports the session's running total (claude, codex after a resume) is charged
 * the difference from the session's last figure, so no turn is paid twice.
 */
function turnCost(lane: LaneSpec, facts: ProviderFacts | null, progress: LaneProgress, ctx: LaneContext): { spent: number; sessionUsd: number | null; turnUsd: number | null } {
  const runner = lane.runners.agent;
  const before = progress.agentUsd ?? 0;
  if (facts === null || !isPresetRunner(runner)) return { spent: before, sessionUsd: progress.sessionUsd ?? null, turnUsd: null };
  const reported = costOf(facts, runner.model ?? PRESETS[runner.preset].defaultModel, ctx.prices);
  if (reported === null) return { spent: before, sessionUsd: progress.sessionUsd ?? null, turnUsd: null };
  // The turn resumed the lane's session (whatever id the CLI gives the continuation).
  const resumed = progress.session != null;
  const previous = PRESETS[runner.preset].sessionTotals && resumed ? (progress.sessionUsd ?? 0) : 0;
  const turnUsd = Math.max(0, reported - previous);
  return { spent: before + turnUsd, sessionUsd: reported, turnUsd };
}

/** A typed refusal of `body` as the lane's end; null when it passed. Anything untyped is thrown on. */
async function refusal(body: () => Promise<void>): Promise<StepResult | null> {
  try {
    await body();
    return null;
  } catch (error) {
    if (!isLanewardError(error) || (error.code !== 'WORKSPACE_TOO_LARGE' && error.code !== 'WORKSPACE_FAILED')) throw error;
    return { ok: false, code: error.code, detail: error.message, attempts: 0 };
  }
}
