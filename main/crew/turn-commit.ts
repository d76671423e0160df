import { git, gitFailure } from '../git/run-git.ts';
import { serialized } from '../git/serialize.ts';
import { clearStaleLocks } from '../git/stale-locks.ts';
import { canonical } from '../git/worktree-list.ts';
import { commonDirOf, failed, gitDirOf, gitOk, headOf, needDirectory } from './workspace-git.ts';

/*
 * A lane's turn commit: everything the agent left in the worktree after a turn, committed
 * once under laneward's own identity, and found again after a crash.
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

/** The commit message of a lane's turn commit: `crew clean` and recovery read it back. */
export function turnMessage(lane: string, turn: number): string {
  return `laneward: ${lane} turn ${turn}`;
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
