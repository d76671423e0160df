import { existsSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { ResultCode } from '../../formats/codes/codes.ts';
import { isLanewardError, LanewardError, oneLineMessage } from '../../formats/codes/error.ts';
import { laneOfBranch } from '../git/branch-name.ts';
import { canonical, listWorktrees } from '../git/worktree-list.ts';
import { claimOut } from './out-claim.ts';
import type { LoadedCrew } from './load-crew.ts';
import { pruneWorktrees, removeWorktree } from './workspace.ts';

/** What `crew clean` did with one worktree. */
export interface CleanedWorktree {
  readonly lane: string;
  readonly worktree: string;
  readonly branch: string | null;
  /** removed; pruned: its directory was already gone and git forgot it; kept: see code and reason. */
  readonly status: 'removed' | 'pruned' | 'kept';
  readonly code: ResultCode | null;
  readonly reason: string | null;
}

/**
 * `crew clean`: removes every worktree under the crew's out that laneward made for a lane
 * (`<out>/<lane>/worktree`, registered in the crew's repository), whichever way its lane
 * ended, leftovers of a crash included; then `git worktree prune`. A worktree with
 * uncommitted changes, or locked, is kept unless `force`. Branches are always kept: they
 * hold the lanes' commits. Worktrees elsewhere are never touched, even on the crew's
 * branches (a crew of the same name in another out may be running in them). The out is
 * claimed first: no crew may be running there while its worktrees are removed (CREW_BUSY).
 */
export async function crewClean(loaded: LoadedCrew, options: { readonly force: boolean }): Promise<CleanedWorktree[]> {
  const workspace = loaded.workspace;
  if (workspace === null) throw new LanewardError('CREW_INVALID', 'workspace: the crew file names no workspace, so it has no worktrees to clean', { path: loaded.file });
  // A missing out holds no worktree and no running crew: nothing to claim.
  const release = existsSync(loaded.out) ? claimOut(loaded.out, loaded.crew.crew, loaded.file) : () => {};
  try {
    const entries = await listWorktrees(workspace.repo);
    if (typeof entries === 'string') throw new LanewardError('WORKSPACE_FAILED', `listing the worktrees of ${workspace.repo}: ${entries}`, { path: workspace.repo });
    const out = canonical(loaded.out);
    const prefix = `refs/heads/laneward/${loaded.crew.crew}/`;
    const ours = entries
      .slice(1)
      .filter((entry) => basename(entry.path) === 'worktree' && canonical(dirname(dirname(entry.path))) === out)
      .map((entry) => ({
        entry,
        lane: entry.branch?.startsWith(prefix) === true ? laneOfBranch(entry.branch) : basename(dirname(entry.path)),
      }))
      .sort((a, b) => (a.lane < b.lane ? -1 : a.lane > b.lane ? 1 : 0));
    const done: CleanedWorktree[] = [];
    for (const { entry, lane } of ours) {
      const branch = entry.branch?.replace(/^refs\/heads\//, '') ?? null;
      const base = { lane, worktree: entry.path, branch };
      if (entry.prunable !== null) {
        done.push({ ...base, status: 'pruned', code: null, reason: null });
        continue;
      }
      try {
        const removed = await removeWorktree(entry.path, { force: options.force });
        done.push({ ...base, status: removed === 'removed' ? 'removed' : 'pruned', code: null, reason: null });
      } catch (error) {
        const code: ResultCode = isLanewardError(error) ? error.code : 'WORKSPACE_FAILED';
        done.push({ ...base, status: 'kept', code, reason: oneLineMessage(error) });
      }
    }
    await pruneWorktrees(workspace.repo);
    return done;
  } finally {
    release();
  }
}
