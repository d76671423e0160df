import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { LanewardError } from '../../formats/codes/error.ts';
import { branchNameProblem, laneBranch } from '../git/branch-name.ts';
import { gitFailure, gitSync } from '../git/run-git.ts';

const SAMPLE_RUN = '20260101T000000Z-000000';

/** A crew's workspace, checked at load: every lane's worktree starts at `commit`. */
export interface LoadedWorkspace {
  /** The repository's top-level work tree (absolute), whatever directory inside it the file named. */
  readonly repo: string;
  /** The base as the crew file wrote it (default HEAD). */
  readonly base: string;
  /**
   * The base resolved once, at load: every lane starts at this commit even when the base
   * branch moves while the crew runs.
   */
  readonly commit: string;
}

/**
 * Refuses a crew whose workspace cannot work before any lane starts (CREW_INVALID naming
 * the field): a repo that is not a git work tree, a base that names no commit, or a crew
 * name or lane id that git refuses in a branch name (`a..b`, `x.lock`, `v1.`).
 */
export function checkWorkspace(
  file: string,
  dir: string,
  workspace: { readonly repo: string; readonly base?: string | undefined },
  crew: string,
  lanes: readonly string[],
): LoadedWorkspace {
  const invalid = (message: string) => new LanewardError('CREW_INVALID', message, { path: file });
  const repo = resolve(dir, workspace.repo);
  if (statSync(repo, { throwIfNoEntry: false })?.isDirectory() !== true) throw invalid(`workspace.repo: ${repo} is not a directory`);
  const inside = gitSync(['rev-parse', '--is-inside-work-tree'], { cwd: repo });
  if (inside.status !== 0 || inside.stdout.trim() !== 'true') {
    const why = inside.status === 0 ? 'it is inside a .git directory or a bare repository' : gitFailure(['rev-parse'], inside);
    throw invalid(`workspace.repo: ${repo} is not a git work tree (${why})`);
  }
  const top = gitSync(['rev-parse', '--show-toplevel'], { cwd: repo });
  if (top.status !== 0) throw invalid(`workspace.repo: ${repo}: ${gitFailure(['rev-parse'], top)}`);
  const base = workspace.base ?? 'HEAD';
  // An option-looking base would be read as an option by the git commands it is passed to.
  if (base.startsWith('-')) throw invalid(`workspace.base: ${JSON.stringify(base)} starts with "-"; name a branch, tag or commit`);
  const resolved = gitSync(['rev-parse', '--verify', '--quiet', '--end-of-options', `${base}^{commit}`], { cwd: repo });
  const commit = resolved.stdout.trim();
  if (resolved.status !== 0 || !/^[0-9a-f]{40,64}$/.test(commit)) {
    throw invalid(`workspace.base: ${JSON.stringify(base)} does not resolve to a commit in ${top.stdout.trim()}`);
  }
  // Run ids are ours (main/crew/crew-run-id.ts) and always valid: one stands for any.
  const crewProblem = branchNameProblem(laneBranch(crew, 'lane', SAMPLE_RUN));
  if (crewProblem !== null) throw invalid(`crew: ${JSON.stringify(crew)} cannot be part of a git branch name (${crewProblem})`);
  for (const lane of lanes) {
    const problem = branchNameProblem(laneBranch(crew, lane, SAMPLE_RUN));
    if (problem !== null) throw invalid(`lane ${lane}: its branch ${laneBranch(crew, lane, '<run id>')} is not a valid git branch name (${problem})`);
  }
  return { repo: top.stdout.trim(), base, commit };
}
