import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { LanewardError } from '../../formats/codes/error.ts';
import { git, gitFailure } from '../git/run-git.ts';
import { makeDirs } from '../fs/make-dirs.ts';
import { gitOk, TRAIN_IDENTITY } from './land-git.ts';

/**
 * The train's scratch worktree for one lane: `<out>/.land/<lane>` (a lane id never starts
 * with '.', so it is no lane's run directory), detached, never the user's checkout nor the
 * lane's worktree. At a fixed path so a train started after one that was killed finds
 * what it left and removes it first.
 */
export function scratchPath(out: string, lane: string): string {
  return join(out, '.land', lane);
}

/** Removes the scratch worktree (a rebase half done in it included) and what git keeps of it. */
export async function removeScratch(repo: string, path: string): Promise<void> {
  if (existsSync(path)) await git(['worktree', 'remove', '--force', '--force', path], { cwd: repo });
  rmSync(path, { recursive: true, force: true });
  await git(['worktree', 'prune'], { cwd: repo });
}

/** A fresh detached worktree at `commit`. */
export async function addScratch(repo: string, path: string, commit: string): Promise<void> {
  await removeScratch(repo, path);
  makeDirs(join(path, '..'));
  await gitOk('adding the scratch worktree', ['worktree', 'add', '--detach', '--end-of-options', path, commit], repo);
}

/**
 * Brings the lane onto `base` in the scratch worktree: `rebase` replays the lane's commits
 * (the worktree at the lane's tip), `merge` makes a merge commit (the worktree at the base).
 * The new tip, or null for a conflict (the operation aborted, the worktree left clean).
 */
export async function bringOnto(scratch: string, mode: 'rebase' | 'merge', lane: string, tip: string, base: string, oldBase: string): Promise<string | null> {
  const args =
    mode === 'rebase'
      ? [...TRAIN_IDENTITY, 'rebase', '--no-autostash', '--no-autosquash', '--onto', base, oldBase]
      : [...TRAIN_IDENTITY, 'merge', '--no-ff', '--no-edit', '-m', `laneward crew land: ${lane}`, '--end-of-options', tip];
  const result = await git(args, { cwd: scratch });
  if (result.status !== 0) {
    // A conflict leaves unmerged paths; any other failure is git's, not the lane's.
    const unmerged = await git(['diff', '--name-only', '--diff-filter=U'], { cwd: scratch });
    await git(mode === 'rebase' ? ['rebase', '--abort'] : ['merge', '--abort'], { cwd: scratch });
    if (unmerged.status !== 0 || unmerged.stdout.trim() === '') throw new LanewardError('WORKSPACE_FAILED', `${mode} of lane ${lane} onto ${base.slice(0, 12)} in ${scratch}: ${gitFailure(args, result)}`, { path: scratch });
    return null;
  }
  return (await gitOk('reading the new tip', ['rev-parse', '--verify', 'HEAD^{commit}'], scratch)).trim();
}
