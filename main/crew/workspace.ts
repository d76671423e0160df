import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { LanewardError } from '../../formats/codes/error.ts';
import { branchNameProblem, laneBranch } from '../git/branch-name.ts';
import { git } from '../git/run-git.ts';
import { serialized } from '../git/serialize.ts';
import { canonical, listWorktrees, samePath, type WorktreeEntry } from '../git/worktree-list.ts';
import { makeDirs } from '../fs/make-dirs.ts';
import { commonDirOf, failed, gitOk, headOf, needDirectory, needRevision } from './workspace-git.ts';
import { worktreeChanges } from './worktree-changes.ts';

/*
 * A lane's git workspace: one worktree per lane, on its own branch, inside the crew's out.
 *
 * Layout: `<out>/<lane id>/worktree` on branch `laneward/<crew>/<run id>/<lane id>`. The worktree
 * sits inside the lane's run directory so everything a lane leaves is in one place and
 * `crew clean` can find a leftover by its path alone; the run directory's exported files
 * are its top-level regular files, which a subdirectory never touches.
 *
 * Every function takes paths and runs git as an argv array (main/git/run-git.ts): no hooks,
 * no signing, no inherited GIT_* variables. Runtime git failures are WORKSPACE_FAILED;
 * a removal refused for uncommitted changes is WORKSPACE_DIRTY. This module makes, finds
 * and removes the worktree; worktree-changes.ts reads what it holds and turn-commit.ts
 * commits a turn in it.
 */

/** Where a lane's worktree lives: inside its run directory `<out>/<lane>`. */
export function laneWorktreePath(out: string, lane: string): string {
  return join(out, lane, 'worktree');
}

export interface LaneWorktreeSpec {
  /** The repository's work tree (any directory inside it). */
  readonly repo: string;
  /** Where a new branch starts: a commit-ish, best the commit the crew resolved at load. */
  readonly base: string;
  readonly crew: string;
  readonly lane: string;
  /** The crew run's id (main/crew/crew-run-id.ts): a new run never continues another run's branch. */
  readonly run: string;
  /** The lane's branch as its record names it (a lane saved under another layout keeps its own); default `laneward/<crew>/<run>/<lane>`. */
  readonly branch?: string | null;
  /** The crew's out directory (absolute). */
  readonly out: string;
}

export interface LaneWorktree {
  readonly path: string;
  /** The short branch name, `laneward/<crew>/<run>/<lane>`. */
  readonly branch: string;
  readonly head: string;
  /** False when an existing worktree was found and reused (a crew started again). */
  readonly created: boolean;
}

/**
 * Makes the lane's worktree, or finds the one a crew that stopped (or was killed) left.
 * Idempotent: a registered worktree at the lane's path on the lane's branch is reused as
 * it is (its commits and uncommitted work kept); a branch that exists without a worktree
 * gets its worktree added again at the branch's head, not at `base` (its commits are the
 * lane's work); a worktree whose `git worktree add` was killed before it finished (git
 * leaves it locked "initializing", half checked out, before any agent ran in it) is
 * removed and added again. Refuses (WORKSPACE_FAILED): the branch checked out in another
 * worktree, another branch at the lane's path, or a non-empty directory there that is not
 * a worktree (never deleted: it is not laneward's).
 */
export async function laneWorktree(spec: LaneWorktreeSpec): Promise<LaneWorktree> {
  const path = resolve(laneWorktreePath(spec.out, spec.lane));
  const branch = spec.branch ?? laneBranch(spec.crew, spec.lane, spec.run);
  const ref = `refs/heads/${branch}`;
  const problem = branchNameProblem(branch);
  if (problem !== null) throw failed(`lane ${spec.lane}: ${branch} is not a valid git branch name (${problem})`, path);
  const repo = resolve(spec.repo);
  needDirectory(repo, `lane ${spec.lane}: the repository`);
  needRevision(spec.base, `lane ${spec.lane}: the base`, path);
  const registry = await registryKey(repo);
  return serialized(`worktree:${canonical(path)}`, () => serialized(registry, async () => {
    const entries = await worktrees(repo);
    const holder = entries.find((entry) => entry.branch === ref);
    if (holder !== undefined && !samePath(holder.path, path)) {
      if (holder.prunable === null) throw failed(`lane ${spec.lane}: branch ${branch} is checked out in another worktree, ${holder.path}`, path);
      await gitOk(['worktree', 'prune'], repo, `lane ${spec.lane}: pruning the deleted worktree ${holder.path}`);
    }
    // Names first, real paths only for a match: a crew of thousands of lanes lists
    // thousands of worktrees for each lane it opens.
    const mine = entries.find((entry) => basename(entry.path) === 'worktree' && basename(dirname(entry.path)) === spec.lane && samePath(entry.path, path));
    if (mine !== undefined) {
      if (mine.locked === 'initializing') await discardHalfMade(repo, path);
      else if (mine.prunable !== null || !existsSync(path)) await gitOk(['worktree', 'prune'], repo, `lane ${spec.lane}: pruning its deleted worktree`);
      else if (mine.branch !== ref) throw failed(`lane ${spec.lane}: ${path} is a worktree on ${mine.branch ?? 'a detached HEAD'}, not on ${branch}`, path);
      else return { path, branch, head: await headOf(path), created: false };
    }
    const there = statSync(path, { throwIfNoEntry: false });
    if (there !== undefined && !(there.isDirectory() && readdirSync(path).length === 0)) {
      throw failed(`lane ${spec.lane}: ${path} exists and is not a worktree of ${repo}; move it away`, path);
    }
    try {
      makeDirs(dirname(path));
    } catch (error) {
      throw failed(`lane ${spec.lane}: cannot make ${dirname(path)}: ${(error as Error).message}`, path);
    }
    const exists = await git(['rev-parse', '--verify', '--quiet', ref], { cwd: repo });
    const args =
      exists.status === 0
        ? ['worktree', 'add', '--quiet', path, branch]
        : ['worktree', 'add', '--quiet', '--no-track', '-b', branch, path, `${spec.base}^{commit}`];
    await gitOk(args, repo, `lane ${spec.lane}: adding its worktree on ${branch}`);
    return { path, branch, head: await headOf(path), created: true };
  }));
}

/**
 * The key under which a repository's worktree registry (.git/worktrees) is changed or
 * read: git reads a sibling's half-written entry while it is being added ("failed to read
 * .git/worktrees/<w>/commondir"), so a crew's lanes list, add and remove one at a time.
 */
async function registryKey(repoOrWorktree: string): Promise<string> {
  return `registry:${canonical(await commonDirOf(repoOrWorktree))}`;
}

async function worktrees(cwd: string): Promise<WorktreeEntry[]> {
  const entries = await listWorktrees(cwd);
  if (typeof entries === 'string') throw failed(`listing the worktrees of ${cwd}: ${entries}`, cwd);
  return entries;
}

/** A worktree whose add was killed: nothing but git's own half checkout is in it. */
async function discardHalfMade(repo: string, path: string): Promise<void> {
  await git(['worktree', 'unlock', path], { cwd: repo });
  const removed = await git(['worktree', 'remove', '--force', path], { cwd: repo });
  if (removed.status === 0) return;
  rmSync(path, { recursive: true, force: true });
  await gitOk(['worktree', 'prune'], repo, `pruning the half-made worktree ${path}`);
}

/**
 * Removes a worktree (`git worktree remove`); its branch and commits are kept. Refuses one
 * with uncommitted changes, or locked, unless `force` (WORKSPACE_DIRTY, naming what it
 * holds); never the repository's main worktree. 'absent' when there is no such directory
 * (prune the repository to forget its registration: {@link pruneWorktrees}).
 */
export async function removeWorktree(path: string, options: { readonly force: boolean }): Promise<'removed' | 'absent'> {
  if (!existsSync(path)) return 'absent';
  const registry = await registryKey(path);
  return serialized(`worktree:${canonical(path)}`, () => serialized(registry, async () => {
    const entries = await worktrees(path);
    const index = entries.findIndex((entry) => samePath(entry.path, path));
    if (index === -1) throw failed(`${path} is not a registered worktree`, path);
    if (index === 0) throw failed(`${path} is the repository's main worktree, never removed`, path);
    const entry = entries[index]!;
    const main = entries[0]!.path;
    if (!options.force) {
      if (entry.locked !== null) throw new LanewardError('WORKSPACE_DIRTY', `${path} is locked${entry.locked === '' ? '' : ` (${entry.locked})`}`, { path });
      const changes = await worktreeChanges(path);
      if (changes.changed) {
        throw new LanewardError('WORKSPACE_DIRTY', `${path} has uncommitted changes: ${changes.files} files, +${changes.insertions} -${changes.deletions}`, { path });
      }
    }
    const force = options.force ? (entry.locked !== null ? ['--force', '--force'] : ['--force']) : [];
    await gitOk(['worktree', 'remove', ...force, path], main, `removing the worktree ${path}`);
    return 'removed' as const;
  }));
}

/** Forgets the worktrees of `repo` whose directories are gone (`git worktree prune`). */
export async function pruneWorktrees(repo: string): Promise<void> {
  await gitOk(['worktree', 'prune'], repo, `pruning the worktrees of ${repo}`);
}
