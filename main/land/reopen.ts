import { join } from 'node:path';
import type { LaneReopen } from '../../formats/crew/record.ts';
import { tryReadBounded } from '../fs/read-bounded.ts';
import { LanewardError } from '../../formats/codes/error.ts';
import { git, gitFailure } from '../git/run-git.ts';
import { readReceipt } from './carry.ts';
import { commitOf, gitOk, isAncestor, mergeBase, TRAIN_IDENTITY } from './land-git.ts';
import { LAND_DIR, LAND_RECORD } from './land-record.ts';

/*
 * A complete lane the merge train turned away, on its way back to its agent: which lanes
 * go back (the train's own record says why, and the lane's branch is still what its
 * receipt vouches for), and the base brought into the lane's worktree by laneward (the
 * agent may run where it cannot write refs or the index), left uncommitted with git's
 * conflict markers for the agent to resolve in its next turn.
 */

/** The train's outcomes that send a lane back to its agent: its product diff changed on the new base, or it did not apply. */
const REOPENED: Readonly<Record<string, string>> = { refused: 'RECEIPT_CARRY_PRODUCT_CHANGED', conflict: 'LAND_CONFLICT' };

export type Reopen = Omit<LaneReopen, 'merged' | 'conflicts'>;

/**
 * Why the lane in `runDir` on `branch` goes back to its agent, or null. Only when its
 * `land/land.json` says the train refused it for a changed product diff or met a conflict,
 * for the head its receipt names, which must still be the branch's tip (a lane that came
 * back and has a new receipt since is not the one the train refused; a branch moved by
 * anyone else is stale, not laneward's to rework), and the base has moved past it.
 */
export async function reopenable(repo: string, runDir: string, branch: string): Promise<Reopen | null> {
  const said = trainSaid(runDir);
  if (said === null) return null;
  const { code, base, head } = said;
  const tip = await commitOf(repo, `refs/heads/${branch}`);
  if (tip !== head) return null;
  const baseTip = await commitOf(repo, `refs/heads/${base}`);
  if (baseTip === null || (await isAncestor(repo, baseTip, tip))) return null;
  return { code, branch: base, base: baseTip, from: tip };
}

/**
 * What the lane's last train said, when it sends the lane back: read from its run
 * directory alone (no git), so a crew can tell before its lanes run that one will.
 */
export function trainSaid(runDir: string): { readonly code: string; readonly from: string; readonly base: string; readonly head: string } | null {
  const read = tryReadBounded(join(runDir, LAND_DIR, LAND_RECORD), 64 * 1024);
  if (!read.ok) return null;
  let record: { status?: unknown; code?: unknown; from?: unknown; base?: unknown };
  try {
    record = JSON.parse(read.bytes.toString('utf8')) as typeof record;
  } catch {
    return null;
  }
  const { status, code, from, base } = record;
  if (typeof status !== 'string' || typeof code !== 'string' || REOPENED[status] !== code || typeof from !== 'string' || typeof base !== 'string') return null;
  const receipt = readReceipt(runDir);
  if (receipt === null || (receipt.carriedFrom ?? receipt.head) !== from) return null;
  return { code, from, base, head: receipt.head };
}

/**
 * Merges `reopen.base` into the lane's worktree without committing (`git merge --no-commit
 * --no-ff`): the lane's next turn commit is the merge, its branch only moves forward and
 * the train then fast-forwards the base to it. Idempotent for a crew killed anywhere in it:
 * a merge of this base already under way (MERGE_HEAD) is taken as it stands, a base already
 * in the head needs none. Returns the files left in conflict, and those both the lane and
 * the base changed (the hunks the train found changed are in them).
 */
export async function bringBase(worktree: string, reopen: Reopen): Promise<{ readonly conflicts: string[]; readonly touched: string[] }> {
  const head = await commitOf(worktree, 'HEAD');
  const pending = await commitOf(worktree, 'MERGE_HEAD');
  if (head === null) throw new LanewardError('WORKSPACE_FAILED', `the lane worktree ${worktree} has no HEAD`, { path: worktree });
  if (pending !== reopen.base && !(await isAncestor(worktree, reopen.base, head))) {
    // Someone else's merge in the lane's worktree is not laneward's to abort.
    if (pending !== null) throw new LanewardError('WORKSPACE_FAILED', `the lane worktree ${worktree} has a merge of ${pending.slice(0, 12)} under way, not of ${reopen.base.slice(0, 12)}`, { path: worktree });
    const args = [...TRAIN_IDENTITY, 'merge', '--no-commit', '--no-ff', '--no-edit', '--quiet', reopen.base];
    const merged = await git(args, { cwd: worktree });
    // 1 with unmerged paths is a conflict, the agent's to resolve; anything else is git failing.
    if (merged.status !== 0 && (merged.status !== 1 || (await unmerged(worktree)).length === 0)) {
      throw new LanewardError('WORKSPACE_FAILED', `merging ${reopen.branch} at ${reopen.base.slice(0, 12)} into ${worktree}: ${gitFailure(args, merged)}`, { path: worktree });
    }
  }
  const since = await mergeBase(worktree, reopen.from, reopen.base);
  const names = async (a: string, b: string) => (await gitOk('listing changed files', ['diff', '--name-only', '--no-renames', '-z', a, b, '--'], worktree)).split('\0').filter((f) => f !== '');
  const lane = new Set(await names(since, reopen.from));
  return { conflicts: await unmerged(worktree), touched: (await names(since, reopen.base)).filter((f) => lane.has(f)) };
}

/**
 * The lines of `files` at `head` that still open or close a conflict (`<<<<<<< ` or
 * `>>>>>>> ` at a line's start), as `path:line`: a lane back from the train that left one
 * has not resolved its conflict, whatever its checks say (a `=======` line alone is
 * ordinary text, a heading's underline say, and not looked for).
 */
export async function markersLeft(repo: string, head: string, files: readonly string[]): Promise<string[]> {
  if (files.length === 0) return [];
  const args = ['grep', '-n', '-I', '--no-color', '-E', '^(<<<<<<<|>>>>>>>)( |$)', head, '--', ...files.map((f) => `:(literal)${f}`)];
  const found = await git(args, { cwd: repo });
  if (found.status === 1) return [];
  if (found.status !== 0) throw new LanewardError('WORKSPACE_FAILED', `looking for conflict markers at ${head.slice(0, 12)}: ${gitFailure(args, found)}`, { path: repo });
  // `<head>:<path>:<line>:<text>`
  return found.stdout.split('\n').filter((l) => l !== '').map((l) => l.slice(head.length + 1).split(':').slice(0, 2).join(':'));
}

async function unmerged(worktree: string): Promise<string[]> {
  const out = await gitOk(`listing the conflicts in ${worktree}`, ['diff', '--name-only', '--diff-filter=U', '-z', '--'], worktree);
  return [...new Set(out.split('\0').filter((f) => f !== ''))].sort();
}

/** What the agent's first turn back is told: what the train said, the new base, and what to resolve. */
export function reopenGuidance(reopen: Reopen, brought: { readonly conflicts: readonly string[]; readonly touched: readonly string[] }): string {
  const said =
    reopen.code === 'LAND_CONFLICT'
      ? `the merge train could not bring this lane (${reopen.from.slice(0, 12)}) onto ${reopen.branch} (LAND_CONFLICT)`
      : `the merge train refused this lane's receipt (RECEIPT_CARRY_PRODUCT_CHANGED): on ${reopen.branch} its change is no longer the one reviewed`;
  const files = brought.conflicts.length > 0
    ? `Files in conflict, with git's conflict markers: ${brought.conflicts.join(', ')}. Resolve each one (keep what both sides meant, remove every <<<<<<< ======= >>>>>>> marker).`
    : `The merge applied cleanly, but the base changed lines in or around this lane's change in: ${brought.touched.join(', ') || '(none listed)'}. Check that the lane's change is still right there.`;
  return [
    `${said}.`,
    `laneward merged ${reopen.branch} at ${reopen.base.slice(0, 12)} into this worktree, not committed; laneward commits it with your turn.`,
    files,
    'Do not commit, abort the merge, or switch branches. Finish when the plan holds on the new base.',
  ].join(' ');
}
