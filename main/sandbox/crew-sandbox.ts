import { isAbsolute, resolve } from 'node:path';
import { LanewardError } from '../../formats/codes/error.ts';
import { isPresetRunner } from '../../formats/providers/runner.ts';
import type { SandboxMode, SandboxState } from '../../formats/sandbox/bwrap-argv.ts';
import { laneBranch } from '../git/branch-name.ts';
import { gitSync } from '../git/run-git.ts';
import type { LoadedCrew } from '../crew/load-crew.ts';
import { probeBwrap } from './bwrap-probe.ts';
import type { LaneSandbox } from './lane-sandbox.ts';

/**
 * The sandbox state for `mode`: `off` as asked, else the probe's answer. `required` with
 * no sandbox to be had refuses the crew before any lane starts (SANDBOX_UNAVAILABLE).
 */
export function sandboxFor(mode: SandboxMode, env: NodeJS.ProcessEnv, file: string): SandboxState {
  if (mode === 'off') return { kind: 'off' };
  const probed = probeBwrap(env);
  if (probed.kind === 'none' && mode === 'required') {
    throw new LanewardError('SANDBOX_UNAVAILABLE', `sandbox: the crew file requires the agent sandbox, and ${probed.reason}`, { path: file });
  }
  return probed;
}

/** Whether any lane of the crew runs a preset agent in a worktree: the calls the sandbox is for. */
export function crewHasContainable(loaded: LoadedCrew): boolean {
  return loaded.workspace !== null && loaded.lanes.some((lane) => isPresetRunner(lane.runners.agent));
}

/**
 * The crew's sandbox as its lanes use it (a crew with a workspace), its state resolved
 * once at start: every lane's turn is held by the same answer, and the crew's first line says it.
 */
export function crewSandbox(loaded: LoadedCrew, state: SandboxState, crew: string, run: string): LaneSandbox | undefined {
  const workspace = loaded.workspace;
  if (workspace === null) return undefined;
  const common = gitSync(['rev-parse', '--git-common-dir'], { cwd: workspace.repo });
  const dir = common.stdout.trim();
  // Without its git dir there is nothing to keep read-only that the repository's own bind does not.
  const commonDir = common.status === 0 && dir !== '' ? (isAbsolute(dir) ? dir : resolve(workspace.repo, dir)) : workspace.repo;
  return { state, repo: workspace.repo, commonDir, out: loaded.out, laneRefs: `refs/heads/${laneBranch(crew, '', run)}` };
}
