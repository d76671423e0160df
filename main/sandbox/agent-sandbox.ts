import { statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { bwrapArgv, type SandboxMount, type SandboxState } from '../../formats/sandbox/bwrap-argv.ts';
import type { SupervisionSpec } from '../../workers/supervise/spec.ts';
import { makeDirs } from '../fs/make-dirs.ts';

/** Where a lane's agent works and what must stay as it is around it. */
export interface LaneSandboxPaths {
  /** The lane's worktree: the one tree the agent may change. */
  readonly worktree: string;
  /** The repository's top-level work tree and its common git dir (refs, objects, other worktrees' admin dirs). */
  readonly repo: string;
  readonly commonDir: string;
  /** The crew's out (every lane's run directory and worktree). */
  readonly out: string;
  /** The lane's run directory: its private temp dir is `agent/tmp` in it. */
  readonly runDir: string;
}

/**
 * Variables that name a CLI's own directories (its home, config, caches), bound writable
 * when the call's runner sets them. HOME is always the call's home (a runner's private
 * HOME, else the user's): the CLIs write their sessions and settings under it.
 */
const HOME_VARIABLES = ['CODEX_HOME', 'GEMINI_CLI_HOME', 'CLAUDE_CONFIG_DIR', 'XDG_CONFIG_HOME', 'XDG_CACHE_HOME', 'XDG_DATA_HOME', 'XDG_STATE_HOME'] as const;

const isDirectory = (path: string) => statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;

/**
 * The mounts of a lane's contained agent call: writable its worktree, its CLI's home and
 * a private temp dir; read-only inside them the worktree's `.git` file (repointed, it
 * would have laneward commit into another repository), the repository with its git dir
 * (refs, objects, the worktrees' admin dirs and index: laneward stages and commits a turn
 * itself, outside), and the crew's out (other lanes' worktrees and run directories).
 * The call's stream and stderr files are descriptors the supervisor opened, its prompt is
 * its stdin: none needs a writable path. Returns the mounts and the temp dir.
 */
export function laneMounts(paths: LaneSandboxPaths, env: Readonly<Record<string, string | undefined>>, ownTmp: string | undefined): { readonly mounts: SandboxMount[]; readonly tmp: string } {
  // The runner's own TMPDIR (gemini's private one), else one in the lane's run directory;
  // never the inherited one: /tmp is shared with everything else on the machine.
  const tmp = ownTmp !== undefined && isAbsolute(ownTmp) ? ownTmp : join(paths.runDir, 'agent', 'tmp');
  makeDirs(tmp);
  const writable = [env['HOME'], ...HOME_VARIABLES.map((name) => env[name]), tmp].filter((p): p is string => p !== undefined && isAbsolute(p) && isDirectory(p));
  const mounts: SandboxMount[] = [
    ...writable.map((path) => ({ path, write: true })),
    { path: paths.repo, write: false },
    { path: paths.commonDir, write: false },
    { path: paths.out, write: false },
    { path: paths.worktree, write: true },
    { path: join(paths.worktree, '.git'), write: false },
  ];
  return { mounts, tmp };
}

/**
 * `spec` run under `sandbox` for a lane, or as it is when there is no sandbox. The call's
 * environment is the supervisor's with the spec's over it, as its spawn will make it; a
 * private TMPDIR is set unless the runner set its own.
 */
export function containedSpec(spec: SupervisionSpec, sandbox: SandboxState, paths: LaneSandboxPaths): SupervisionSpec {
  if (sandbox.kind !== 'bwrap') return spec;
  const env = { ...process.env, ...spec.env };
  const { mounts, tmp } = laneMounts(paths, env, spec.env?.['TMPDIR']);
  const tmpEnv = spec.env?.['TMPDIR'] === undefined ? { TMPDIR: tmp, TMP: tmp, TEMP: tmp } : {};
  return { ...spec, env: { ...spec.env, ...tmpEnv }, argv: bwrapArgv({ program: sandbox.program, mounts, cwd: paths.worktree }, spec.argv) };
}
