import { statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { bwrapArgv, type SandboxMount, type SandboxState } from '../../formats/sandbox/bwrap-argv.ts';
import type { PresetName } from '../../formats/providers/names.ts';
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
 * A CLI's own directories, writable inside the sandbox: where it keeps its sessions,
 * settings and logs, and nothing else of its HOME. Found by running each pinned CLI under
 * bwrap with its HOME read-only but these (claude 2.1.328, codex 0.169.0, gemini 0.61.0):
 * each ran its tool and ended well. HOME itself stays read-only: a writable ~/.gitconfig
 * could name a filter that laneward's own `git add` of the turn would run, outside.
 */
function cliDirs(preset: PresetName | undefined, env: Readonly<Record<string, string | undefined>>): { readonly dirs: string[]; readonly files: string[] } {
  const home = env['HOME'];
  const under = (base: string | undefined, name: string) => (base === undefined ? undefined : join(base, name));
  if (preset === 'claude-code') return { dirs: [env['CLAUDE_CONFIG_DIR'] ?? under(home, '.claude')].filter(isPath), files: [under(home, '.claude.json')].filter(isPath) };
  if (preset === 'codex') return { dirs: [env['CODEX_HOME'] ?? under(home, '.codex')].filter(isPath), files: [] };
  if (preset === 'gemini-cli') return { dirs: [under(env['GEMINI_CLI_HOME'] ?? home, '.gemini')].filter(isPath), files: [] };
  return { dirs: [], files: [] };
}

const isPath = (value: string | undefined): value is string => value !== undefined && isAbsolute(value);

const isDirectory = (path: string) => statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;

/**
 * The mounts of a lane's contained agent call: writable its worktree, its CLI's own
 * directories and a private temp dir; read-only inside them the worktree's `.git` file (repointed, it
 * would have laneward commit into another repository), the repository with its git dir
 * (refs, objects, the worktrees' admin dirs and index: laneward stages and commits a turn
 * itself, outside), and the crew's out (other lanes' worktrees and run directories).
 * The call's stream and stderr files are descriptors the supervisor opened, its prompt is
 * its stdin: none needs a writable path. Returns the mounts and the temp dir.
 */
export function laneMounts(paths: LaneSandboxPaths, preset: PresetName | undefined, env: Readonly<Record<string, string | undefined>>, ownTmp: string | undefined): { readonly mounts: SandboxMount[]; readonly tmp: string } {
  // The runner's own TMPDIR (gemini's private one), else one in the lane's run directory;
  // never the inherited one: /tmp is shared with everything else on the machine.
  const tmp = ownTmp !== undefined && isAbsolute(ownTmp) ? ownTmp : join(paths.runDir, 'agent', 'tmp');
  makeDirs(tmp);
  // The CLI's directories are made now (it would make them itself): bwrap binds only what exists.
  const own = cliDirs(preset, env);
  for (const dir of own.dirs) makeDirs(dir);
  const files = own.files.filter((file) => statSync(file, { throwIfNoEntry: false })?.isFile() === true);
  const mounts: SandboxMount[] = [
    ...[...own.dirs, tmp].filter(isDirectory).map((path) => ({ path, write: true })),
    ...files.map((path) => ({ path, write: true })),
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
  const { mounts, tmp } = laneMounts(paths, spec.provider, env, spec.env?.['TMPDIR']);
  const tmpEnv = spec.env?.['TMPDIR'] === undefined ? { TMPDIR: tmp, TMP: tmp, TEMP: tmp } : {};
  return { ...spec, env: { ...spec.env, ...tmpEnv }, argv: bwrapArgv({ program: sandbox.program, mounts, cwd: paths.worktree }, spec.argv) };
}
