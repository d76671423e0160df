import type { LaneSpec } from '../../formats/crew/file.ts';
import type { SandboxRefusal } from '../../formats/crew/record.ts';
import { isPresetRunner } from '../../formats/providers/runner.ts';
import type { SandboxState } from '../../formats/sandbox/bwrap-argv.ts';
import type { SupervisionSpec } from '../../workers/supervise/spec.ts';
import { containedSpec } from './agent-sandbox.ts';
import { changedRefs, readOnlyWrites, refsOf, type Refs } from './turn-refusals.ts';

/** A crew's sandbox as its lanes use it: the state the crew started with and the repository it keeps. */
export interface LaneSandbox {
  readonly state: SandboxState;
  readonly repo: string;
  readonly commonDir: string;
  readonly out: string;
  /** The crew run's own lane branches (`refs/heads/laneward/<crew>/<run>/`): laneward moves them, turn by turn. */
  readonly laneRefs: string;
}

/**
 * Whether a lane's agent calls run contained: a preset's CLI (whose tool calls its model
 * chooses) in a worktree, with the sandbox at hand. An argv agent is the user's own
 * program and runs as written.
 */
export function containsAgent(sandbox: LaneSandbox | undefined, lane: LaneSpec, worktree: string | null | undefined): sandbox is LaneSandbox {
  return sandbox !== undefined && sandbox.state.kind === 'bwrap' && worktree != null && isPresetRunner(lane.runners.agent);
}

/** A lane's agent turn spec under the crew's sandbox. */
export function laneContained(sandbox: LaneSandbox, spec: SupervisionSpec, worktree: string, runDir: string): SupervisionSpec {
  return containedSpec(spec, sandbox.state, { worktree, repo: sandbox.repo, commonDir: sandbox.commonDir, out: sandbox.out, runDir });
}

/** The repository's refs before a turn, to tell afterwards which the turn moved. */
export function refsBefore(sandbox: LaneSandbox | undefined): Promise<Refs | null> {
  return sandbox === undefined ? Promise.resolve(null) : refsOf(sandbox.repo);
}

/**
 * What turn `n` had refused or did: the writes its tools were refused as read-only (the
 * sandbox's EROFS in the agent's stream) and the repository's refs that moved during it,
 * the crew run's own lane branches aside. Null when there is nothing to say.
 */
export async function turnRefusal(sandbox: LaneSandbox | undefined, n: number, before: Refs | null, stream: string): Promise<SandboxRefusal | null> {
  if (sandbox === undefined) return null;
  const writes = readOnlyWrites(stream);
  const refs = before === null ? [] : changedRefs(before, await refsOf(sandbox.repo), sandbox.laneRefs);
  if (writes === 0 && refs.length === 0) return null;
  return { turn: n, readOnlyWrites: writes, refsMoved: refs, contained: sandbox.state.kind === 'bwrap' };
}
