import { copyFileSync, existsSync, readdirSync, rmSync, statSync, utimesSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { LanewardError } from '../../formats/codes/error.ts';
import { branchNameProblem, laneBranch } from '../git/branch-name.ts';
import { git, gitFailure, type GitResult } from '../git/run-git.ts';
import { serialized } from '../git/serialize.ts';
import { clearStaleLocks } from '../git/stale-locks.ts';
import { canonical, listWorktrees, samePath, type WorktreeEntry } from '../git/worktree-list.ts';
import { makeDirs } from '../fs/make-dirs.ts';

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
 * a removal refused for uncommitted changes is WORKSPACE_DIRTY.
 */

/** The identity every turn commit is made with, whatever the user's git config says. */
const IDENTITY = [
  '-c', 'user.name=laneward',
  '-c', 'user.email=laneward@localhost',
  '-c', 'author.name=laneward',
  '-c', 'author.email=laneward@localhost',
  '-c', 'committer.name=laneward',
  '-c', 'committer.email=laneward@localhost',
];
const IDENTITY_EMAIL = 'laneward@localhost';

/** Where a lane's worktree lives: inside its run directory `<out>/<lane>`. */
export function laneWorktreePath(out: string, lane: string): string {
  return join(out, lane, 'worktree');
}

/** The commit message of a lane's turn commit: `crew clean` and recovery read it back. */
export function turnMessage(lane: string, turn: number): string {
  return `laneward: ${lane} turn ${turn}`;
}

const failed = (message: string, path: string) => new LanewardError('WORKSPACE_FAILED', message, { path });

/** A directory git is to run in: a missing one would read as "git could not be run". */
function needDirectory(path: string, what: string): void {
  if (statSync(path, { throwIfNoEntry: false })?.isDirectory() !== true) throw failed(`${what}: ${path} is not a directory`, path);
}

/** A revision given to git positionally: one starting with '-' would be read as an option. */
function needRevision(rev: string, what: string, path: string): void {
  if (rev === '' || rev.startsWith('-')) throw failed(`${what}: ${JSON.stringify(rev)} is not a revision`, path);
}

async function gitOk(args: readonly string[], cwd: string, what: string, env?: Readonly<Record<string, string>>): Promise<GitResult> {
  const result = await git(args, { cwd, ...(env === undefined ? {} : { env }) });
  if (result.status !== 0) throw failed(`${what}: ${gitFailure(args, result)}`, cwd);
  return result;
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

/** The commit a worktree (or any directory of a repository) has checked out. */
export async function headOf(path: string): Promise<string> {
  needDirectory(path, 'reading the head');
  const args = ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'];
  const result = await gitOk(args, path, `reading the head of ${path}`);
  return result.stdout.trim();
}

export interface WorktreeChanges {
  /** True when `commitTurn` would commit something (or, with `since`, when the tree differs from it). */
  readonly changed: boolean;
  readonly files: number;
  readonly insertions: number;
  readonly deletions: number;
}

/**
 * What the worktree holds that its HEAD (or `since`, a commit such as the lane's last
 * exported head, to count an agent's own commits too) does not: tracked changes, deleted
 * files and untracked files, as `git add -A` would stage them (so .gitignore'd files are
 * not changes: git would not commit them). Read-only: staged into a scratch copy of the
 * worktree's index, never its own, so it neither takes nor trips the index lock. Binary
 * files count as files with no lines.
 */
export async function worktreeChanges(path: string, options: { readonly since?: string } = {}): Promise<WorktreeChanges> {
  needDirectory(path, 'reading the changes');
  if (options.since !== undefined) needRevision(options.since, 'reading the changes since', path);
  return withStagedWorktree(path, 'reading the changes', async (env) => {
    const args = ['diff', '--cached', '--numstat', '-z', '--no-renames', '--no-ext-diff', '--no-textconv', options.since ?? 'HEAD', '--'];
    const diff = await gitOk(args, path, `reading the changes in ${path}`, env);
    return numstat(diff.stdout);
  });
}

/**
 * Runs `body` with the worktree staged as `git add -A` would stage it, in a scratch copy
 * of its index (`env` names it), never its own: read-only, it neither takes nor trips
 * the index lock.
 */
export async function withStagedWorktree<T>(path: string, what: string, body: (env: Readonly<Record<string, string>>) => Promise<T>): Promise<T> {
  const gitDir = await gitDirOf(path);
  const scratch = join(gitDir, `laneward-changes.${process.pid}.${randomBytes(6).toString('hex')}.index`);
  try {
    // A copy keeps the index's stat cache: only files that changed are hashed again. It
    // keeps the index's mtime too (a millisecond earlier, never later): git trusts an
    // entry's stat data only when the file is older than the index, and a copy stamped now
    // would vouch for a same-size edit made in the same second as the checkout.
    const index = statSync(join(gitDir, 'index'), { throwIfNoEntry: false });
    if (index !== undefined) {
      copyFileSync(join(gitDir, 'index'), scratch);
      const stamp = (Math.floor(index.mtimeMs) - 1) / 1000;
      utimesSync(scratch, stamp, stamp);
    }
    const env = { GIT_INDEX_FILE: scratch };
    if (!existsSync(scratch)) await gitOk(['read-tree', 'HEAD'], path, `reading ${path}`, env);
    await gitOk(['add', '--all', '--', '.'], path, `${what} in ${path}`, env);
    return await body(env);
  } finally {
    rmSync(scratch, { force: true });
    rmSync(`${scratch}.lock`, { force: true });
  }
}

/** `--numstat -z` without renames: `added TAB deleted TAB path NUL` per file, `-` for binary. */
function numstat(text: string): WorktreeChanges {
  let files = 0;
  let insertions = 0;
  let deletions = 0;
  for (const record of text.split('\0')) {
    const fields = record.split('\t');
    if (fields.length < 3) continue;
    files += 1;
    insertions += Number(fields[0]) || 0;
    deletions += Number(fields[1]) || 0;
  }
  return { changed: files > 0, files, insertions, deletions };
}

async function gitDirOf(path: string): Promise<string> {
  const result = await gitOk(['rev-parse', '--absolute-git-dir'], path, `${path} is not a git worktree`);
  return result.stdout.trim();
}

async function commonDirOf(path: string): Promise<string> {
  const result = await gitOk(['rev-parse', '--git-common-dir'], path, `${path} is not a git worktree`);
  const dir = result.stdout.trim();
  return isAbsolute(dir) ? dir : resolve(path, dir);
}

/**
 * Commits everything in the worktree (`git add -A`) as turn `turn` of `lane`: message
 * `laneward: <lane> turn <n>`, identity `laneward <laneward@localhost>`, no hooks, no
 * signing. Returns the new head, or null when the turn left nothing to commit.
 *
 * Crash-safe, to be called again for the same turn after the crew was killed anywhere in
 * it: lock files a killed git left (index, HEAD, the branch's ref) are removed first;
 * work staged but not committed is committed now; when HEAD already is this turn's commit
 * (the crew died after committing, before it recorded the head) the head is returned as
 * it is, and anything changed since is amended into it, so a turn never gets two commits.
 * Precondition: nothing else runs git in this worktree (the agent's turn has ended).
 */
export async function commitTurn(path: string, turn: { readonly lane: string; readonly turn: number }): Promise<string | null> {
  const message = turnMessage(turn.lane, turn.turn);
  needDirectory(path, `committing turn ${turn.turn} of lane ${turn.lane}`);
  return serialized(`worktree:${canonical(path)}`, async () => {
    await clearTurnLocks(path);
    await gitOk(['add', '--all', '--', '.'], path, `staging turn ${turn.turn} of lane ${turn.lane}`);
    const staged = await git(['diff', '--cached', '--quiet', '--no-ext-diff', 'HEAD', '--'], { cwd: path });
    if (staged.status !== 0 && staged.status !== 1) throw failed(`reading the staged changes of turn ${turn.turn}: ${gitFailure(['diff'], staged)}`, path);
    const already = await isTurnCommit(path, message);
    if (staged.status === 0) return already ? headOf(path) : null;
    const args = [...IDENTITY, 'commit', '--quiet', '--no-verify', '--no-gpg-sign', '--cleanup=verbatim', ...(already ? ['--amend'] : []), '-m', message];
    await gitOk(args, path, `committing turn ${turn.turn} of lane ${turn.lane}`);
    return headOf(path);
  });
}

/**
 * The index, HEAD and branch locks a git killed in this worktree left (see clearStaleLocks
 * for the precondition: nothing else runs git in it). Called inside the worktree's serialization.
 */
export async function clearTurnLocks(path: string): Promise<void> {
  const gitDir = await gitDirOf(path);
  const commonDir = await commonDirOf(path);
  const symbolic = await git(['symbolic-ref', '--quiet', 'HEAD'], { cwd: path });
  clearStaleLocks(gitDir, commonDir, symbolic.status === 0 ? symbolic.stdout.trim() : null);
}

/** Whether HEAD is the commit `commitTurn` made for this message (by its message and identity). */
async function isTurnCommit(path: string, message: string): Promise<boolean> {
  const result = await git(['log', '-1', '--format=%ae%x00%B', 'HEAD', '--'], { cwd: path });
  if (result.status !== 0) return false;
  const [email, body] = result.stdout.split('\0');
  return email === IDENTITY_EMAIL && body?.trim() === message;
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
