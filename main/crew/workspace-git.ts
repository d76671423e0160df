import { statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { LanewardError } from '../../formats/codes/error.ts';
import { git, gitFailure, type GitResult } from '../git/run-git.ts';

/*
 * git as the lane workspace modules run it (workspace.ts, worktree-changes.ts,
 * turn-commit.ts): argv arrays through main/git/run-git.ts, a runtime failure as
 * WORKSPACE_FAILED naming the path, and what they read of a worktree's git.
 */

export const failed = (message: string, path: string) => new LanewardError('WORKSPACE_FAILED', message, { path });

/** A directory git is to run in: a missing one would read as "git could not be run". */
export function needDirectory(path: string, what: string): void {
  if (statSync(path, { throwIfNoEntry: false })?.isDirectory() !== true) throw failed(`${what}: ${path} is not a directory`, path);
}

/** A revision given to git positionally: one starting with '-' would be read as an option. */
export function needRevision(rev: string, what: string, path: string): void {
  if (rev === '' || rev.startsWith('-')) throw failed(`${what}: ${JSON.stringify(rev)} is not a revision`, path);
}

export async function gitOk(args: readonly string[], cwd: string, what: string, env?: Readonly<Record<string, string>>): Promise<GitResult> {
  const result = await git(args, { cwd, ...(env === undefined ? {} : { env }) });
  if (result.status !== 0) throw failed(`${what}: ${gitFailure(args, result)}`, cwd);
  return result;
}

/** The commit a worktree (or any directory of a repository) has checked out. */
export async function headOf(path: string): Promise<string> {
  needDirectory(path, 'reading the head');
  const args = ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'];
  const result = await gitOk(args, path, `reading the head of ${path}`);
  return result.stdout.trim();
}

export async function gitDirOf(path: string): Promise<string> {
  const result = await gitOk(['rev-parse', '--absolute-git-dir'], path, `${path} is not a git worktree`);
  return result.stdout.trim();
}

export async function commonDirOf(path: string): Promise<string> {
  const result = await gitOk(['rev-parse', '--git-common-dir'], path, `${path} is not a git worktree`);
  const dir = result.stdout.trim();
  return isAbsolute(dir) ? dir : resolve(path, dir);
}
