import { LanewardError } from '../../formats/codes/error.ts';
import { laneBranch } from '../git/branch-name.ts';
import { git } from '../git/run-git.ts';
import type { LoadedWorkspace } from './check-workspace.ts';
import type { WorkspacePort } from './lane-context.ts';
import { guardTurn, type TurnLimits } from './turn-size.ts';
import { commitTurn } from './turn-commit.ts';
import { headOf } from './workspace-git.ts';
import { laneWorktree, removeWorktree } from './workspace.ts';
import { worktreeChanges } from './worktree-changes.ts';

/**
 * The crew's workspace as its lanes use it: every lane from the one commit the crew loaded,
 * on a branch of this crew run (`run`), or the one its record names when it has one.
 */
export function workspacePort(workspace: LoadedWorkspace, crew: string, run: string, out: string, limits: TurnLimits): WorkspacePort {
  return {
    async prepare(lane, recorded) {
      const made = await laneWorktree({ repo: workspace.repo, base: workspace.commit, crew, lane, run, branch: recorded, out });
      return { worktree: made.path, branch: made.branch };
    },
    // Counted since the lane's last recorded head: an agent that committed by itself changed files too.
    changed: async (worktree, since) => (await worktreeChanges(worktree, since === null ? {} : { since })).changed,
    commit: (worktree, lane, n) => commitTurn(worktree, { lane, turn: n }),
    head: headOf,
    async guard(worktree, lane, n, since, recorded, known) {
      // The turn is committed on whatever HEAD names: an agent that left the lane's branch
      // would have it committed elsewhere, and the lane's head would not be its branch's tip.
      const branch = `refs/heads/${recorded ?? laneBranch(crew, lane, run)}`;
      const on = await git(['symbolic-ref', '--quiet', 'HEAD'], { cwd: worktree });
      const named = on.status === 0 ? on.stdout.trim() : 'a detached HEAD';
      if (named !== branch) {
        throw new LanewardError('WORKSPACE_FAILED', `turn ${n} of lane ${lane} left its worktree on ${named}, not on ${branch}; check the branch out again there (git checkout ${branch.slice('refs/heads/'.length)})`, { path: worktree });
      }
      await guardTurn(worktree, { lane, turn: n, since, known: known ?? [] }, limits);
    },
    remove: async (worktree) => {
      await removeWorktree(worktree, { force: false });
    },
  };
}
