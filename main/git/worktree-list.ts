import { realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { git, gitFailure } from './run-git.ts';

/** One entry of `git worktree list --porcelain -z`. */
export interface WorktreeEntry {
  /** As git recorded it: absolute. */
  readonly path: string;
  readonly head: string | null;
  /** The full ref (`refs/heads/...`), or null for a detached or bare entry. */
  readonly branch: string | null;
  /** The lock's reason ('' when it gives none), or null when not locked. */
  readonly locked: string | null;
  /** Git's reason to prune it (its directory is gone), or null. */
  readonly prunable: string | null;
  readonly bare: boolean;
}

/**
 * Every worktree of the repository that `cwd` is in, main worktree first. NUL-separated
 * (`-z`, git 2.36 or later): a path holding a newline cannot split an entry in two.
 */
export async function listWorktrees(cwd: string): Promise<WorktreeEntry[] | string> {
  const args = ['worktree', 'list', '--porcelain', '-z'];
  const result = await git(args, { cwd });
  if (result.status !== 0) return gitFailure(args, result);
  const entries: WorktreeEntry[] = [];
  let current: Record<string, string> | null = null;
  const flush = () => {
    if (current === null || current.worktree === undefined) return;
    entries.push({
      path: current.worktree,
      head: current.HEAD ?? null,
      branch: current.branch ?? null,
      locked: current.locked ?? null,
      prunable: current.prunable ?? null,
      bare: current.bare !== undefined,
    });
  };
  for (const field of result.stdout.split('\0')) {
    if (field === '') {
      flush();
      current = null;
      continue;
    }
    current ??= {};
    const space = field.indexOf(' ');
    const key = space === -1 ? field : field.slice(0, space);
    current[key] = space === -1 ? '' : field.slice(space + 1);
  }
  flush();
  return entries;
}

/** Whether two paths name one place, compared as {@link canonical} paths. */
export function samePath(a: string, b: string): boolean {
  return canonical(a) === canonical(b);
}

/**
 * A path as git records a worktree's: real. A path that does not exist (a worktree whose
 * directory was deleted) is its nearest existing ancestor's real path with the rest joined
 * on, so a symlinked temp or out directory compares equal either way.
 */
export function canonical(path: string): string {
  const absolute = resolve(path);
  try {
    return realpathSync(absolute);
  } catch {
    const parent = dirname(absolute);
    return parent === absolute ? absolute : join(canonical(parent), basename(absolute));
  }
}
