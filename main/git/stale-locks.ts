import { rmSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Removes the lock files a git killed mid-commit in this worktree leaves behind: its index
 * lock, its HEAD lock and its branch's ref lock. Git writes no owner into a lock file, so a
 * lock cannot be told live from stale by looking at it; the caller's precondition decides:
 * nothing else runs git in this worktree (the lane's agent turn has ended and its orphans
 * were settled, and laneward's own calls on one worktree are serialized). Locks other
 * worktrees share (packed-refs, config) are never touched: another lane's git may hold them.
 */
export function clearStaleLocks(gitDir: string, commonDir: string, branchRef: string | null): string[] {
  const locks = [join(gitDir, 'index.lock'), join(gitDir, 'HEAD.lock')];
  if (branchRef !== null && branchRef.startsWith('refs/heads/')) locks.push(join(commonDir, `${branchRef}.lock`));
  const removed: string[] = [];
  for (const lock of locks) {
    try {
      rmSync(lock);
      removed.push(lock);
    } catch {
      // Absent: the usual case.
    }
  }
  return removed;
}
