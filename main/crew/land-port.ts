import type { LandEvent } from '../../formats/crew/land-lines.ts';
import type { PregateCheck } from '../../formats/crew/pregate-checks.ts';
import type { LaneProgress } from '../../formats/crew/record.ts';
import { LanewardError } from '../../formats/codes/error.ts';
import type { LoadedWorkspace } from './check-workspace.ts';
import type { LandPort, WorkspacePort } from './lane-context.ts';
import { randomBytes } from 'node:crypto';
import { PREGATE_VAR, pregateGuidance, runPregate, sweepChecks } from './pregate.ts';
import { writeShipReceipt } from './ship-receipt.ts';
import { treeOf } from '../land/land-git.ts';
import { bringBase, markersLeft, reopenable, reopenGuidance } from '../land/reopen.ts';

/**
 * A crew's way from done to landed for its lanes: the pregate at a lane's head, and the
 * receipt bound to it. Only for a crew with a workspace and a `pregate`: a lane that passed
 * is one whose head passed the repository's checks.
 */
export function landPort(options: {
  readonly crew: string;
  readonly crewRun: string;
  readonly workspace: LoadedWorkspace;
  readonly port: WorkspacePort;
  readonly checks: readonly PregateCheck[];
  readonly cancel: AbortSignal;
  /** What the lane spent so far, every call counted (reviewers, observers, agent turns). */
  readonly spentUsd: (progress: LaneProgress) => number;
  readonly onEvent: (event: LandEvent) => void;
}): LandPort {
  return {
    async pregate(lane, progress, journal) {
      // A check a crew that died left running is torn down, proven gone, before any runs again.
      let tag = progress.pregateTag;
      if (tag != null && !(await sweepChecks(tag))) throw new LanewardError('WORKSPACE_FAILED', `lane ${lane}: a pregate check a stopped crew left (${PREGATE_VAR}=${tag}) could not be proven gone`, { path: progress.runDir });
      if (tag == null) {
        tag = randomBytes(12).toString('base64url');
        // Saved before any check starts: a crew killed at any instant after can find its checks.
        await journal(tag);
      }
      // Found again (or added back at the branch's tip) when a crew started again finds it gone.
      const made = await options.port.prepare(lane, progress.branch ?? null);
      // A lane back from the train whose conflict still shows git's markers goes back to its agent before any check runs.
      const reopen = progress.reopen;
      if (reopen?.merged === true && progress.head != null) {
        const left = await markersLeft(options.workspace.repo, progress.head, reopen.conflicts);
        if (left.length > 0) {
          const tree = await treeOf(options.workspace.repo, progress.head);
          return { passed: false, head: progress.head, tree, guidance: `The merge of ${reopen.branch} is committed with conflict markers left at ${left.join(', ')}: resolve each conflict there (remove every <<<<<<< ======= >>>>>>> marker, keep what both sides meant).`, detail: `conflict markers left at ${left.join(', ')} (${reopen.code})` };
        }
      }
      const result = await runPregate({ lane, worktree: made.worktree, runDir: progress.runDir, checks: options.checks, cancel: options.cancel, tag });
      const failed = result.checks.filter((c) => c.status !== 'pass').map((c) => c.id);
      options.onEvent({ kind: 'pregate', lane, status: result.passed ? 'pass' : 'fail', head: result.head, tree: result.tree, checks: result.checks.length, failed, ms: result.ms, file: result.file });
      const detail = `pregate at ${result.head.slice(0, 12)}: ${failed.join(', ')} did not pass (${result.file})`;
      return { passed: result.passed, head: result.head, tree: result.tree, guidance: result.passed ? null : pregateGuidance(result), detail };
    },
    async receipt(lane, progress) {
      if (progress.head == null || progress.branch == null) throw new LanewardError('WORKSPACE_FAILED', `lane ${lane} has no head on a branch to bind a receipt to`, { path: progress.runDir });
      const event = await writeShipReceipt({
        crew: options.crew,
        crewRun: options.crewRun,
        lane,
        runDir: progress.runDir,
        repo: options.workspace.repo,
        branch: progress.branch,
        head: progress.head,
        // A lane back from the train was merged with the base's tip of then: that is its base now.
        base: progress.reopen?.base ?? options.workspace.commit,
        tree: progress.pregateTree ?? null,
        spendUsd: options.spentUsd(progress),
      });
      options.onEvent(event);
    },
    async reopenable(_lane, progress) {
      if (progress.branch == null || progress.head == null) return null;
      return reopenable(options.workspace.repo, progress.runDir, progress.branch);
    },
    reopened(lane, reopen) {
      options.onEvent({ kind: 'reopen', lane, code: reopen.code, branch: reopen.branch, base: reopen.base, from: reopen.from });
    },
    async bringBase(worktree, reopen) {
      const brought = await bringBase(worktree, reopen);
      return { conflicts: brought.conflicts, guidance: reopenGuidance(reopen, brought) };
    },
  };
}
