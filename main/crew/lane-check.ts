import { join, posix } from 'node:path';
import type { LaneProgress } from '../../formats/crew/record.ts';
import { LanewardError } from '../../formats/codes/error.ts';
import { laneChecks, type LaneCheckEvent, type LaneFiles } from '../../formats/crew/lane-check.ts';
import { git, gitFailure } from '../git/run-git.ts';
import { tryReadBounded } from '../fs/read-bounded.ts';

const TASKS_FILE = 'tasks.jsonl';
const MAX_TASKS_BYTES = 16 * 1024 * 1024;

/** A path as the repository names it: `./a//b` and `a/b` are one file. */
const repoPath = (p: string) => posix.normalize(p).replace(/^(\.\/)+/, '');

/**
 * The files the lane's review run plans to change: every `files` entry of its exported
 * tasks.jsonl. A lane that has not exported yet (or whose tasks name none) plans none.
 */
export function plannedFiles(runDir: string): string[] {
  const read = tryReadBounded(join(runDir, TASKS_FILE), MAX_TASKS_BYTES);
  if (!read.ok) return [];
  const files = new Set<string>();
  for (const line of read.bytes.toString('utf8').split('\n')) {
    if (line.trim() === '') continue;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch {
      // The export is validated before it is written; a torn line names no file it could be sure of.
      continue;
    }
    const named = (row as { files?: unknown } | null)?.files;
    if (!Array.isArray(named)) continue;
    for (const file of named) if (typeof file === 'string' && file !== '') files.add(repoPath(file));
  }
  return [...files];
}

/**
 * The files the lane's branch changed against the crew's base, as `git diff base...branch`
 * names them (from their merge base, so a base that moved since is not counted as the
 * lane's); a rename counts as both its paths. Null when the branch does not exist: the
 * lane has nothing to land.
 */
export async function changedFiles(repo: string, base: string, branch: string): Promise<string[] | null> {
  const tip = await git(['rev-parse', '--verify', '--quiet', '--end-of-options', `refs/heads/${branch}^{commit}`], { cwd: repo });
  if (tip.status !== 0) return null;
  const args = ['diff', '--name-only', '-z', '--no-renames', '--no-ext-diff', '--end-of-options', `${base}...${tip.stdout.trim()}`];
  const diff = await git(args, { cwd: repo });
  if (diff.status !== 0) throw new LanewardError('WORKSPACE_FAILED', `listing the files ${branch} changed in ${repo}: ${gitFailure(args, diff)}`, { path: repo });
  return diff.stdout.split('\0').filter((p) => p !== '');
}

/**
 * The crew's lane check: each open lane (one whose branch exists: nothing lands yet, so
 * every such lane is open, whatever its stage) against every other, in crew order.
 * Read-only: git is asked, nothing written.
 */
export async function crewLaneCheck(repo: string, base: string, lanes: readonly (LaneProgress | undefined)[]): Promise<LaneCheckEvent[]> {
  const open: LaneFiles[] = [];
  for (const progress of lanes) {
    if (progress?.branch == null) continue;
    const changed = await changedFiles(repo, base, progress.branch);
    if (changed === null) continue;
    open.push({ lane: progress.lane, planned: plannedFiles(progress.runDir), changed });
  }
  return laneChecks(open);
}
