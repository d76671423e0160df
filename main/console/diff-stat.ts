import { git, gitSync, type GitResult } from '../git/run-git.ts';

/** A page waits on this read: a repository that cannot answer quickly shows no stat. */
export const DIFF_STAT_TIMEOUT_MS = 2_000;

/** A commit id as laneward records them (never an option, a range or a ref name). */
const COMMIT = /^[0-9a-f]{7,64}$/;

export interface DiffStatInput {
  /** The repository the lane's worktree was made from. */
  readonly repo: string;
  /** The crew's workspace base commit, and the lane's head. */
  readonly base: string;
  readonly head: string;
  readonly timeoutMs?: number;
}

/**
 * `git diff --shortstat <base> <head>` in the repository ("3 files changed, 10
 * insertions(+), 2 deletions(-)"; "no changes" when the two trees are the same), or null
 * when it is unavailable: an id that is not a commit id, git missing or failing, or the
 * timeout. Synchronous, for a story read in one call; see {@link diffStatAsync}.
 */
export function diffStat(input: DiffStatInput): string | null {
  const args = diffArgs(input);
  return args === null ? null : statOf(gitSync(args, { cwd: input.repo, timeoutMs: input.timeoutMs ?? DIFF_STAT_TIMEOUT_MS }));
}

/** {@link diffStat} without blocking the event loop while git runs. */
export async function diffStatAsync(input: DiffStatInput): Promise<string | null> {
  const args = diffArgs(input);
  return args === null ? null : statOf(await git(args, { cwd: input.repo, timeoutMs: input.timeoutMs ?? DIFF_STAT_TIMEOUT_MS }));
}

function diffArgs(input: DiffStatInput): string[] | null {
  if (!COMMIT.test(input.base) || !COMMIT.test(input.head)) return null;
  // A read: no optional lock taken (the crew's own git commands may be running), no
  // external diff or textconv command the repository's config could name.
  return ['--no-optional-locks', 'diff', '--shortstat', '--no-ext-diff', '--no-textconv', input.base, input.head, '--'];
}

function statOf(result: GitResult): string | null {
  if (result.status !== 0) return null;
  const line = result.stdout.trim();
  return line === '' ? 'no changes' : line;
}
