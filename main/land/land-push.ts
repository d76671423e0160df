import { LanewardError } from '../../formats/codes/error.ts';
import { git, gitFailure } from '../git/run-git.ts';

/**
 * The train's pushes: a lane's branch with a lease pinned to the value the train read
 * from the remote before it rebased (never a bare --force-with-lease, never a --force),
 * and the base as a plain fast-forward.
 */

/** The remote's tip of `refs/heads/<branch>`, '' when the remote has no such branch. */
export async function remoteTip(repo: string, remote: string, branch: string): Promise<string> {
  const args = ['ls-remote', '--refs', '--end-of-options', remote, `refs/heads/${branch}`];
  const result = await git(args, { cwd: repo });
  if (result.status !== 0) throw new LanewardError('WORKSPACE_FAILED', `reading ${branch} on ${remote}: ${gitFailure(args, result)}`, { path: repo });
  const line = result.stdout.split('\n').find((l) => l.endsWith(`\trefs/heads/${branch}`));
  return line === undefined ? '' : line.split('\t')[0]!;
}

/** Whether git's porcelain output says the remote refused the update (as opposed to git failing to talk to it). */
function rejected(stdout: string): boolean {
  return stdout.split('\n').some((line) => line.startsWith('!\t'));
}

/**
 * Pushes `sha` to the lane's branch on the remote, only if the remote's branch is still
 * `seen` ('' = absent). False when the lease was rejected: the remote moved.
 */
export async function pushLane(repo: string, remote: string, branch: string, seen: string, sha: string): Promise<boolean> {
  if (seen === sha) return true;
  const ref = `refs/heads/${branch}`;
  const args = ['push', '--porcelain', '--no-verify', `--force-with-lease=${ref}:${seen}`, '--end-of-options', remote, `${sha}:${ref}`];
  const result = await git(args, { cwd: repo });
  if (result.status === 0) return true;
  if (rejected(result.stdout)) return false;
  throw new LanewardError('WORKSPACE_FAILED', `pushing ${branch} to ${remote}: ${gitFailure(args, result)}`, { path: repo });
}

/** The base to the remote as a fast-forward: LAND_PUSH_REJECTED when the remote's base is not an ancestor of `sha`. */
export async function pushBase(repo: string, remote: string, base: string, sha: string): Promise<void> {
  const ref = `refs/heads/${base}`;
  const args = ['push', '--porcelain', '--no-verify', '--end-of-options', remote, `${sha}:${ref}`];
  const result = await git(args, { cwd: repo });
  if (result.status === 0) return;
  if (rejected(result.stdout)) throw new LanewardError('LAND_PUSH_REJECTED', `${remote} refused ${base} at ${sha.slice(0, 12)} as a fast-forward`, { path: repo });
  throw new LanewardError('WORKSPACE_FAILED', `pushing ${base} to ${remote}: ${gitFailure(args, result)}`, { path: repo });
}
