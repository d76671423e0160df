import { copyFileSync, existsSync, rmSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { gitDirOf, gitOk, needDirectory, needRevision } from './workspace-git.ts';

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
