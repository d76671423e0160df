import { join } from 'node:path';
import { isLanewardError, toError } from '../../formats/codes/error.ts';
import { forLane, type LaneSpec } from '../../formats/crew/file.ts';
import { crewQaLaneId } from '../../formats/crew/qa-id.ts';
import { isTerminalStage, markStage, newLane, OWNER_PENDING, reopenLane, retryLane, type LaneProgress, type LaneStage } from '../../formats/crew/record.ts';
import { work } from './agent-turns.ts';
import type { LaneContext } from './lane-context.ts';
import type { QaStep, StepResult } from './ports.ts';
import { observerCharge } from './lane-cost.ts';
import { makeDirs } from '../fs/make-dirs.ts';
import type { CancelMark } from './lane-cancels.ts';


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
  // A write-behind save that failed: the lane's next save, or its end, throws it.
  let behindFailed: { error: unknown } | undefined;
  let behind: Promise<void> = Promise.resolve();
  const save = async (changes: Partial<LaneProgress>) => {
    Object.assign(progress, changes, { updatedAt: now() });
    markStage(progress, progress.updatedAt);
    if (behindFailed !== undefined) throw behindFailed.error;
    await ctx.store.crewLanes.put(key, progress);
    ctx.onChange(progress);
  };
  /**
   * A save between two stages that nothing waits for (write-behind): lmdb encodes the
   * record now and commits it in this thread's ordered write queue, so it is committed
   * with or before the next write this thread queues (the next stage's first journal
   * record, the next turn's dispatch, the lane's next awaited save). What must be saved
   * before a child starts still is: a reviewer's and an agent turn's dispatch are awaited
   * journal writes queued after it. A crash before its commit resumes the lane in the
   * stage before, as a crash just after that stage's work always could: every stage
   * resumes on its own (a bootstrap that passed is left alone, a turn is ingested by its
   * keys, a run continues from its journal). Each awaited commit waits for the disk flush
   * of the one before it, so every wait saved here is one flush off the lane's path.
   */
  const advance = (changes: Partial<LaneProgress>) => {
    Object.assign(progress, changes, { updatedAt: now() });
    markStage(progress, progress.updatedAt);
    if (behindFailed !== undefined) throw behindFailed.error;
    const put = ctx.store.crewLanes.put(key, progress);
    behind = Promise.resolve(put).then(
      () => undefined,
      (error: unknown) => {
        behindFailed ??= { error };
      },
    );
    ctx.onChange(progress);
  };
  /** Everything saved behind is committed (or its failure thrown). */
  const settleBehind = async () => {
    await behind;
    if (behindFailed !== undefined) throw behindFailed.error;
  };
  const stage = (next: LaneStage) => advance({ stage: next });
  const count = (step: QaStep | StepResult) => {
    progress.attempts += step.attempts;
    if ('lines' in step) Object.assign(progress, observerCharge(progress, step));
  };
  // A step that did not succeed ends the lane with its code, unless the crew is being cancelled.
  const end = async (step: StepResult) => {
    // An operator's cancel of this lane or its call, heard by the step that ended: the lane
    // ends failed with the cancel's code (it runs again only when retried), not interrupted.
    const mark = ctx.cancel.aborted ? null : (ctx.cancels?.mark(lane.id) ?? null);
    if (mark !== null) return cancelled(mark, step.detail);
    if (ctx.cancel.aborted || step.code === 'CANCELLED') return save({ stage: 'interrupted', stoppedIn: progress.stage, code: step.code ?? 'CANCELLED', detail: step.detail });
    // The call it failed on keeps its evidence on the lane (an agent turn's is saved with the turn).
    await save({ stage: 'failed', stoppedIn: progress.stage, code: step.code ?? 'INTERNAL', detail: step.detail, ...(step.call === undefined ? {} : { failedCall: step.call }) });
    // Automation stops for a failed lane: its QA history is cleared, and diff-bearing turns
    // nobody reviewed get their final review request (a lane never bootstrapped has none).
    if (step.code !== 'QA_NO_OBSERVER') await ctx.qa.stop(qaLane(ctx, lane)).catch(() => undefined);
  };

  /** Ends the lane by an operator's cancel (CALL_CANCELLED, LANE_CANCELLED), where it stood. */
  const cancelled = async (mark: CancelMark, why: string | null) => {
    ctx.cancels?.clearCancel(lane.id, mark.kind);
    const what = mark.kind === 'call' ? 'its running call was cancelled' : 'the lane was cancelled';
    await save({ stage: 'failed', stoppedIn: progress.stage, code: mark.kind === 'call' ? 'CALL_CANCELLED' : 'LANE_CANCELLED', detail: `${what} by ${mark.by} (request ${mark.seq}) in stage ${progress.stage}${why === null ? '' : `: ${why}`}` });
    if (progress.stoppedIn !== 'queued' && progress.stoppedIn !== 'bootstrap') await ctx.qa.stop(qaLane(ctx, lane)).catch(() => undefined);
  };

  // A failed lane runs again only when asked (--retry-failed, or crew retry for this lane), as new attempts.
  const retried = ctx.retryFailed === true || ctx.cancels?.takeRetry(lane.id) === true ? retryLane(progress, now()) : null;
  if (retried !== null) Object.assign(progress, retried);
  // An interrupted lane is not finished: a crew started again picks it up where it stopped.
  if (progress.stage === 'interrupted' && progress.stoppedIn !== null) Object.assign(progress, { stage: progress.stoppedIn, stoppedIn: null, code: null, detail: null });
  // A complete lane the merge train turned away goes back to its agent (saved before anything of it runs).
  if (progress.stage === 'complete' && ctx.land !== undefined && ctx.workspace !== undefined && !ctx.cancel.aborted) {
    // A record git cannot read leaves the lane complete as it was: its receipt still stands for its branch.
    const reopen = await ctx.land.reopenable(lane.id, progress).catch(() => null);
    const reopened = reopen === null ? null : reopenLane(progress, reopen, now());
    if (reopened !== null) {
      await ctx.store.crewLanes.put(key, Object.assign(progress, reopened));
      ctx.land.reopened(lane.id, reopen!);
    }
  }
  if (isTerminalStage(progress.stage)) return progress;
  markStage(progress, now());
  ctx.onChange(progress);
  try {
    makeDirs(progress.runDir);
    while (!isTerminalStage(progress.stage)) {
      if (ctx.cancel.aborted) {
        await save({ stage: 'interrupted', stoppedIn: progress.stage, code: 'CANCELLED', detail: `stopped in stage ${progress.stage}` });
        break;
      }
      // An operator's cancel ends the lane before its next stage: a lane cancelled, or a call
      // cancelled whose step went on regardless (a voice that may fail, a call that had
      // just ended): the lane never carries on past a cancel as if it had not been asked.
      const mark = ctx.cancels?.mark(lane.id) ?? null;
      if (mark !== null) {
        await cancelled(mark, null);
        break;
      }
      switch (progress.stage) {
        case 'queued':
          stage('bootstrap');
          break;
        case 'bootstrap': {
          const step = await ctx.qa.start(qaLane(ctx, lane), forLane(lane.runners.observer, lane.id));
          count(step);
          // A lane back from the merge train has its review and its gate's answer already.
          if (step.ok) stage(progress.reopen != null ? 'work' : 'review');
          else await end(step);
          break;
        }
        case 'review': {
          // Each reviewer is counted at its spawn, saved: a crew killed mid-review loses no count.
          const onSpawn = () => save({ attempts: progress.attempts + 1 });
          const step = await ctx.review.drive(lane, progress.runDir, { retry: retried !== null, onSpawn });
          if (!step.ok) await end(step);
          else stage(step.status === 'gate_pending' ? 'answer' : 'work');
          break;
        }
        case 'answer': {
          const step = await ctx.review.answer(progress.runDir);
          count(step);
          if (step.ok) stage('work');
          // Parked for the owner: saved interrupted in this stage, so an answer (seen by this crew, or a crew started again) continues it here.
          else if (step.code === OWNER_PENDING && !ctx.cancel.aborted) await save({ stage: 'interrupted', stoppedIn: 'answer', code: OWNER_PENDING, detail: step.detail });
          else await end(step);
          break;
        }
        case 'work':
          await work(ctx, lane, qaLane(ctx, lane), progress, { save, advance }, end);
          break;
        case 'cross-check': {
          const step = await ctx.qa.finish(qaLane(ctx, lane));
          count(step);
          if (step.ok) advance({ stage: 'export', guidance: null });
          // A failed cross-check aborts completion: the agent works on with its guidance.
          else if (step.guidance !== null && progress.turnsDone - (progress.turnBase ?? 0) < ctx.agentTurns) advance({ stage: 'work', guidance: step.guidance });
          else await end(step);
          break;
        }
        case 'pregate': {
          // The repository's checks at the head the agent finished at, before the cross-check:
          // a passed cross-check closes the lane's QA, so a failed check could no longer go
          // back to the agent after it. A crew started again runs them again (no model is called).
          const gate = await ctx.land!.pregate(lane.id, progress, (tag) => save({ pregateTag: tag }));
          if (ctx.cancel.aborted) break;
          if (gate.passed) advance({ stage: 'cross-check', pregateTree: gate.tree });
          // A failed check goes back to the agent while it has turns left, as the cross-check's guidance does.
          else if (progress.turnsDone - (progress.turnBase ?? 0) < ctx.agentTurns) advance({ stage: 'work', guidance: gate.guidance, pregateTree: null });
          else await end({ ok: false, code: 'PREGATE_FAILED', detail: gate.detail, attempts: 0 });
          break;
        }
        case 'export': {
          const step = await ctx.review.export(progress.runDir);
          count(step);
          if (!step.ok) {
            await end(step);
            break;
          }
          // Bound to the head the pregate passed at, which must still be its branch's tip.
          if (ctx.land !== undefined) await ctx.land.receipt(lane.id, progress);
          await save({ stage: 'complete', code: null, detail: null });
          // A complete lane's work is on its branch: its worktree goes, a failed lane's stays for inspection.
          if (ctx.workspace !== undefined && progress.worktree != null) {
            await ctx.workspace.remove(progress.worktree);
            await save({ worktree: null });
          }
          break;
        }
      }
    }
    await settleBehind();
  } catch (error) {
    // A store that cannot be written or a port that broke: the lane ends typed, the crew goes on.
    const code = isLanewardError(error) ? error.code : 'INTERNAL';
    const stoppedIn = ctx.cancel.aborted ? progress.stage : null;
    await save({ stage: ctx.cancel.aborted ? 'interrupted' : 'failed', stoppedIn, code, detail: toError(error).message }).catch(() => undefined);
  }
  return progress;
}

/**
 * The lane's id in the QA store: qualified by its crew, since lanes of two crews on one
 * state root may share a name (lane-01) and must never share an observer or a history;
 * one-to-one with the pair, so no other crew's lane can name the same record.
 */
export function qaLane(ctx: Pick<LaneContext, 'crew'>, lane: LaneSpec): string {
  return crewQaLaneId(ctx.crew, lane.id);
}
