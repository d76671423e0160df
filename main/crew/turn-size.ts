import { LanewardError } from '../../formats/codes/error.ts';
import { git, gitFailure, gitWithInput } from '../git/run-git.ts';
import { serialized } from '../git/serialize.ts';
import { canonical } from '../git/worktree-list.ts';
import { clearTurnLocks } from './turn-commit.ts';
import { withStagedWorktree } from './worktree-changes.ts';

/** What one agent turn may add to its lane's branch. */
export interface TurnLimits {
  /** The largest file (blob) a turn may add, in bytes. */
  readonly maxFileBytes: number;
  /** All the new content of one turn together, in bytes: many files each under the file limit count too. */
  readonly maxTurnBytes: number;
}

/** A file a turn adds: its path in the tree and its size in bytes. */
export interface TurnBlob {
  readonly path: string;
  readonly bytes: number;
}

/** Why a turn is too large: one file over the file limit (the largest), or the whole turn over the turn limit. */
export type TooLarge = { readonly kind: 'file'; readonly path: string; readonly bytes: number } | { readonly kind: 'turn'; readonly files: number; readonly bytes: number };

const failed = (message: string, path: string) => new LanewardError('WORKSPACE_FAILED', message, { path });

/**
 * Every file content a turn would put on the lane's branch that `since` (the lane's last
 * recorded head) does not hold: the worktree as `git add -A` stages it, and every commit
 * the agent made on top of `since` itself, even one whose file a later commit deleted (it
 * would still be in the branch's history). A symlink is what git stores of it, its target
 * path, never the size of what it points to. Nor what the `known` commits' trees hold (the
 * base merged into a lane back from the merge train): a tree named beside its commit,
 * since a commit that is not in the walk's history excludes no object of its own.
 */
export async function turnBlobs(worktree: string, since: string, known: readonly string[] = []): Promise<TurnBlob[]> {
  return withStagedWorktree(worktree, 'reading the turn', async (env) => {
    const tree = await git(['write-tree'], { cwd: worktree, env });
    if (tree.status !== 0) throw failed(`reading the turn in ${worktree}: ${gitFailure(['write-tree'], tree)}`, worktree);
    // The root tree and commits print without a path; blobs print with theirs.
    const args = ['rev-list', '--objects', '--filter=object:type=blob', 'HEAD', tree.stdout.trim(), '--not', since, `${since}^{tree}`, ...known.flatMap((k) => [k, `${k}^{tree}`]), '--'];
    const listed = await git(args, { cwd: worktree });
    if (listed.status !== 0) throw failed(`reading the turn in ${worktree}: ${gitFailure(args, listed)}`, worktree);
    const named = new Map<string, string>();
    for (const line of listed.stdout.split('\n')) {
      const space = line.indexOf(' ');
      if (space > 0) named.set(line.slice(0, space), line.slice(space + 1));
    }
    if (named.size === 0) return [];
    const check = ['cat-file', '--batch-check=%(objectname) %(objecttype) %(objectsize)'];
    const sized = await gitWithInput(check, `${[...named.keys()].join('\n')}\n`, { cwd: worktree });
    if (sized.status !== 0) throw failed(`reading the turn in ${worktree}: ${gitFailure(check, sized)}`, worktree);
    const blobs: TurnBlob[] = [];
    for (const line of sized.stdout.split('\n')) {
      const [sha, type, size] = line.split(' ');
      const path = sha === undefined ? undefined : named.get(sha);
      if (type === 'blob' && path !== undefined) blobs.push({ path, bytes: Number(size) });
    }
    return blobs;
  });
}

/** The turn's first problem against `limits`: its largest file over the file limit, else its total over the turn limit; null when it fits. */
export function tooLarge(blobs: readonly TurnBlob[], limits: TurnLimits): TooLarge | null {
  let largest: TurnBlob | undefined;
  let total = 0;
  for (const blob of blobs) {
    total += blob.bytes;
    if (largest === undefined || blob.bytes > largest.bytes) largest = blob;
  }
  if (largest !== undefined && largest.bytes > limits.maxFileBytes) return { kind: 'file', path: largest.path, bytes: largest.bytes };
  if (total > limits.maxTurnBytes) return { kind: 'turn', files: blobs.length, bytes: total };
  return null;
}

/**
 * Refuses a turn too large for `limits` before anything of it is committed
 * (WORKSPACE_TOO_LARGE, the file named): commits the agent made itself are taken off the
 * lane's branch (`git reset --mixed since`: the branch back at the lane's last recorded
 * head, the worktree's files untouched, for the operator to inspect), so none of the turn
 * ends up on the branch. Precondition: the agent's turn has ended.
 */
export async function guardTurn(worktree: string, turn: { readonly lane: string; readonly turn: number; readonly since: string; readonly known?: readonly string[] }, limits: TurnLimits): Promise<void> {
  const problem = tooLarge(await turnBlobs(worktree, turn.since, turn.known), limits);
  if (problem === null) return;
  await serialized(`worktree:${canonical(worktree)}`, async () => {
    // A crew killed inside this reset leaves git's locks: the turn is refused again, not stuck.
    await clearTurnLocks(worktree);
    const args = ['reset', '--quiet', '--mixed', turn.since, '--'];
    const reset = await git(args, { cwd: worktree });
    if (reset.status !== 0) throw failed(`taking turn ${turn.turn} of lane ${turn.lane} off its branch: ${gitFailure(args, reset)}`, worktree);
  });
  const what =
    problem.kind === 'file'
      ? `adds ${problem.path} of ${problem.bytes} bytes, over the crew's limits.max_file_bytes ${limits.maxFileBytes}`
      : `adds ${problem.files} files of ${problem.bytes} bytes in all, over the crew's limits.max_turn_bytes ${limits.maxTurnBytes}`;
  throw new LanewardError('WORKSPACE_TOO_LARGE', `turn ${turn.turn} of lane ${turn.lane} ${what}; nothing of it was committed, the lane's branch stays at ${turn.since}`, {
    path: problem.kind === 'file' ? problem.path : worktree,
  });
}
