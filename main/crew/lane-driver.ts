import { join } from 'node:path';
import { parseAgentTurn } from '../../formats/agent-turn.ts';
import { isLanewardError, toError } from '../../formats/error.ts';
import { fillArgv, type LaneSpec } from '../../formats/crew-file.ts';
import { isTerminalStage, newLane, type LaneProgress, type LaneStage } from '../../formats/crew-record.ts';
import type { SuperviseFn } from '../dispatch/dispatcher.ts';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import { tryReadBounded } from '../fs/read-bounded.ts';
import type { Store } from '../store/store.ts';
import type { CrewActions } from './crew-actions.ts';
import type { QaPort, ReviewPort, StepResult } from './ports.ts';
import { makeDirs } from '../fs/make-dirs.ts';

const MAX_TURN_BYTES = 256 * 1024;

/** Everything a lane driver shares with the other lanes of its crew. */
export interface LaneContext {
  readonly crew: string;
  readonly out: string;
  readonly store: Store;
  readonly actions: CrewActions;
  readonly review: ReviewPort;
  readonly qa: QaPort;
  readonly run: SuperviseFn;
  readonly agentTurns: number;
  readonly cancel: AbortSignal;
  /** Called after every saved change, for the live view and the lines. */
  readonly onChange: (progress: LaneProgress) => void;
}

/**
 * Drives one lane from wherever its saved progress says it is: bootstrap the observer,
 * review the plan to its gate, answer it, let the agent work under QA cadence, cross-check
 * its finish, export and validate. Each stage is saved before it starts, so a crew started
 * again continues every lane where it was; the stages below it resume on their own.
 */
export async function driveLane(ctx: LaneContext, lane: LaneSpec): Promise<LaneProgress> {
  const key: [string, string] = [ctx.crew, lane.id];
  const now = () => new Date().toISOString();
  const progress: LaneProgress = ctx.store.crewLanes.get(key) ?? newLane(ctx.crew, lane.id, join(ctx.out, lane.id), now());
  const save = async (changes: Partial<LaneProgress>) => {
    Object.assign(progress, changes, { updatedAt: now() });
    await ctx.store.crewLanes.put(key, progress);
    ctx.onChange(progress);
  };
  const stage = (next: LaneStage) => save({ stage: next });
  const count = (step: StepResult) => {
    progress.attempts += step.attempts;
  };
  // A step that did not succeed ends the lane with its code, unless the crew is being cancelled.
  const end = async (step: StepResult) => {
    if (ctx.cancel.aborted || step.code === 'CANCELLED') return save({ stage: 'interrupted', stoppedIn: progress.stage, code: step.code ?? 'CANCELLED', detail: step.detail });
    await save({ stage: 'failed', code: step.code ?? 'INTERNAL', detail: step.detail });
    // Automation stops for a failed lane: its QA history is cleared, and diff-bearing turns
    // nobody reviewed get their final review request (a lane never bootstrapped has none).
    if (step.code !== 'QA_NO_OBSERVER') await ctx.qa.stop(qaLane(ctx, lane)).catch(() => undefined);
  };

  // An interrupted lane is not finished: a crew started again picks it up where it stopped.
  if (progress.stage === 'interrupted' && progress.stoppedIn !== null) Object.assign(progress, { stage: progress.stoppedIn, stoppedIn: null, code: null, detail: null });
  if (isTerminalStage(progress.stage)) return progress;
  ctx.onChange(progress);
  try {
    makeDirs(progress.runDir);
    while (!isTerminalStage(progress.stage)) {
      if (ctx.cancel.aborted) {
        await save({ stage: 'interrupted', stoppedIn: progress.stage, code: 'CANCELLED', detail: `stopped in stage ${progress.stage}` });
        break;
      }
      switch (progress.stage) {
        case 'queued':
          await stage('bootstrap');
          break;
        case 'bootstrap': {
          const step = await ctx.qa.start(qaLane(ctx, lane), fillArgv(lane.runners.observer, { lane: lane.id }));
          count(step);
          if (step.ok) await stage('review');
          else await end(step);
          break;
        }
        case 'review': {
          const step = await ctx.review.drive(lane, progress.runDir);
          count(step);
          if (!step.ok) await end(step);
          else await stage(step.status === 'gate_pending' ? 'answer' : 'work');
          break;
        }
        case 'answer': {
          const step = await ctx.review.answer(progress.runDir);
          count(step);
          if (step.ok) await stage('work');
          else await end(step);
          break;
        }
        case 'work':
          await work(ctx, lane, progress, save, end);
          break;
        case 'cross-check': {
          const step = await ctx.qa.finish(qaLane(ctx, lane));
          count(step);
          if (step.ok) await save({ stage: 'export', guidance: null });
          // A failed cross-check aborts completion: the agent works on with its guidance.
          else if (step.guidance !== null && progress.turnsDone < ctx.agentTurns) await save({ stage: 'work', guidance: step.guidance });
          else await end(step);
          break;
        }
        case 'export': {
          const step = await ctx.review.export(progress.runDir);
          count(step);
          if (step.ok) await save({ stage: 'complete', code: null, detail: null });
          else await end(step);
          break;
        }
      }
    }
  } catch (error) {
    // A store that cannot be written or a port that broke: the lane ends typed, the crew goes on.
    const code = isLanewardError(error) ? error.code : 'INTERNAL';
    const stoppedIn = ctx.cancel.aborted ? progress.stage : null;
    await save({ stage: ctx.cancel.aborted ? 'interrupted' : 'failed', stoppedIn, code, detail: toError(error).message }).catch(() => undefined);
  }
  return progress;
}

type Save = (changes: Partial<LaneProgress>) => Promise<void>;

/**
 * Agent turns until the agent reports finish. Each turn is journaled as dispatched before
 * its agent starts; a turn dispatched before a crash and never reported is recorded as
 * lost and skipped, never run a second time.
 */
async function work(ctx: LaneContext, lane: LaneSpec, progress: LaneProgress, save: Save, end: (step: StepResult) => Promise<void>): Promise<void> {
  if (progress.turnsDispatched > progress.turnsDone) {
    await save({ lostTurns: [...progress.lostTurns, progress.turnsDispatched], turnsDone: progress.turnsDispatched });
  }
  if (progress.turnsDone >= ctx.agentTurns) {
    await end({ ok: false, code: 'AGENT_TURNS_EXHAUSTED', detail: `${progress.turnsDone} turns without a finish that passed its cross-check`, attempts: 0 });
    return;
  }
  const n = progress.turnsDispatched + 1;
  const dir = join(progress.runDir, 'agent');
  makeDirs(dir);
  const promptFile = join(dir, `turn-${n}.prompt.md`);
  const resultFile = join(dir, `turn-${n}.json`);
  const prompt = agentPrompt(lane, n, progress.guidance, resultFile);
  writeFileAtomic(promptFile, prompt, 0o644, false);
  // Journaled once the slot is granted, right before the agent starts: a turn still queued
  // when the crew was killed never started, and runs when the crew is started again.
  const onSlot = () => save({ turnsDispatched: n, attempts: progress.attempts + 1 });
  const outcome = await ctx.run(ctx.actions.spec('agent', argvFor(lane, promptFile, resultFile)), { onSlot });
  if (progress.turnsDispatched < n) return end({ ok: false, code: outcome.code ?? 'CANCELLED', detail: `agent turn ${n} never started`, attempts: 0 });
  const user = await ctx.qa.turn(qaLane(ctx, lane), 'user', prompt, false);
  if (!user.ok) return end(user);
  if (outcome.status !== 'ok') return end({ ok: false, code: outcome.code, detail: `agent turn ${n}: ${outcome.status}`, attempts: 0 });
  const read = tryReadBounded(resultFile, MAX_TURN_BYTES);
  const turn = read.ok ? parseAgentTurn(read.bytes.toString('utf8')) : `the turn result ${read.detail}`;
  if (typeof turn === 'string') return end({ ok: false, code: 'AGENT_RESULT_INVALID', detail: `turn ${n}: ${turn}`, attempts: 0 });
  const assistant = await ctx.qa.turn(qaLane(ctx, lane), 'assistant', turn.text, turn.diff);
  if (!assistant.ok) return end(assistant);
  await save({
    turnsDone: n,
    attempts: progress.attempts + assistant.attempts + user.attempts,
    guidance: assistant.guidance ?? user.guidance ?? null,
    stage: turn.finish ? 'cross-check' : 'work',
  });
}

/**
 * The lane's id in the QA store: qualified by its crew, since lanes of two crews on one
 * state root may share a name (lane-01) and must never share an observer or a history.
 */
export function qaLane(ctx: Pick<LaneContext, 'crew'>, lane: LaneSpec): string {
  return `${ctx.crew}.${lane.id}`;
}

function argvFor(lane: LaneSpec, prompt: string, result: string): string[] {
  return fillArgv(lane.runners.agent, { prompt, result, lane: lane.id });
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
