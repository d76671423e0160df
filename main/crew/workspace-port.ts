import type { LoadedWorkspace } from './check-workspace.ts';
import type { WorkspacePort } from './lane-context.ts';
import { commitTurn, headOf, laneWorktree, removeWorktree, worktreeChanges } from './workspace.ts';

/** The crew's workspace as its lanes use it: every lane from the one commit the crew loaded. */
export function workspacePort(workspace: LoadedWorkspace, crew: string, out: string): WorkspacePort {
  return {
    async prepare(lane) {
      const made = await laneWorktree({ repo: workspace.repo, base: workspace.commit, crew, lane, out });
      return { worktree: made.path, branch: made.branch };
    },
    // Counted since the lane's last recorded head: an agent that committed by itself changed files too.
    changed: async (worktree, since) => (await worktreeChanges(worktree, since === null ? {} : { since })).changed,
    commit: (worktree, lane, n) => commitTurn(worktree, { lane, turn: n }),
    head: headOf,
    remove: async (worktree) => {
      await removeWorktree(worktree, { force: false });
    },
  };
}
