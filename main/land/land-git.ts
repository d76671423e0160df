import { LanewardError } from '../../formats/codes/error.ts';
import { git, gitFailure, gitWithInput, type GitResult } from '../git/run-git.ts';

/**
 * The git reads and ref moves the merge train is made of, each one argv (never a shell),
 * every ref move pinned to the value the train saw (`update-ref <ref> <new> <old>`), so a
 * ref someone else moved meanwhile is never overwritten.
 */

/** The identity the train's rebase or merge commits with: the authors of the lane's commits are kept. */
export const TRAIN_IDENTITY = ['-c', 'user.name=laneward', '-c', 'user.email=laneward@localhost'] as const;

function failed(what: string, cwd: string, args: readonly string[], result: GitResult): LanewardError {
  return new LanewardError('WORKSPACE_FAILED', `${what} in ${cwd}: ${gitFailure(args, result)}`, { path: cwd });
}

export async function gitOk(what: string, args: readonly string[], cwd: string): Promise<string> {
  const result = await git(args, { cwd });
  if (result.status !== 0) throw failed(what, cwd, args, result);
  return result.stdout;
}

/** The commit `rev` names, or null when it names none. */
export async function commitOf(cwd: string, rev: string): Promise<string | null> {
  const result = await git(['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`], { cwd });
  return result.status === 0 ? result.stdout.trim() : null;
}

/** The tree of `commit`. */
export async function treeOf(cwd: string, commit: string): Promise<string> {
  return (await gitOk('reading a tree', ['rev-parse', '--verify', '--end-of-options', `${commit}^{tree}`], cwd)).trim();
}

/** Whether `a` is `b` or one of its ancestors. */
export async function isAncestor(cwd: string, a: string, b: string): Promise<boolean> {
  const args = ['merge-base', '--is-ancestor', '--end-of-options', a, b];
  const result = await git(args, { cwd });
  if (result.status === 0) return true;
  if (result.status === 1) return false;
  throw failed('comparing commits', cwd, args, result);
}

export async function mergeBase(cwd: string, a: string, b: string): Promise<string> {
  return (await gitOk('finding a merge base', ['merge-base', '--end-of-options', a, b], cwd)).trim();
}

/**
 * Moves `ref` from `old` to `next` and nothing else: false when the ref was no longer
 * `old` (git refuses the move), so a ref someone else moved is never forced.
 */
export async function moveRef(cwd: string, ref: string, next: string, old: string): Promise<boolean> {
  const args = ['update-ref', '-m', 'laneward crew land', '--end-of-options', ref, next, old];
  const result = await git(args, { cwd });
  if (result.status === 0) return true;
  if ((await commitOf(cwd, ref)) !== old) return false;
  throw failed(`moving ${ref}`, cwd, args, result);
}

/**
 * The patch id (`git patch-id --verbatim`: whitespace kept, line numbers not) of the
 * product diff `from..to`: what a review read, wherever the base put its lines. Empty for
 * an empty diff.
 */
export async function productPatchId(cwd: string, from: string, to: string): Promise<string> {
  const diffArgs = ['diff', '--no-ext-diff', '--no-textconv', '--binary', '--no-renames', '--end-of-options', from, to];
  const diff = await gitOk('reading a product diff', diffArgs, cwd);
  const args = ['patch-id', '--verbatim'];
  const result = await gitWithInput(args, diff, { cwd });
  if (result.status !== 0) throw failed('computing a patch id', cwd, args, result);
  return result.stdout.trim().split(/\s+/)[0] ?? '';
}

/** `git range-diff old_base..old new_base..new`, the evidence a carry keeps (bounded). */
export async function rangeDiff(cwd: string, oldBase: string, oldHead: string, newBase: string, newHead: string): Promise<string> {
  const out = await gitOk('comparing the ranges', ['range-diff', '--no-color', `${oldBase}..${oldHead}`, `${newBase}..${newHead}`], cwd);
  return out.length > 64 * 1024 ? `${out.slice(0, 64 * 1024)}\n[cut at 64 KiB]\n` : out;
}
