import { isAbsolute, normalize, sep } from 'node:path';

/** How laneward's sandbox stands for a crew: `bwrap` contains its agents; `none` cannot; `off` the crew file turned it off. */
export type SandboxState =
  | { readonly kind: 'bwrap'; readonly program: string }
  | { readonly kind: 'none'; readonly reason: string }
  | { readonly kind: 'off' };

/** What a crew file may ask of the sandbox: `required` refuses the crew without it, `auto` uses it where it works, `off` never. */
export const SANDBOX_MODES = ['required', 'auto', 'off'] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];

/** One path of the sandbox's view and whether the call may write it. */
export interface SandboxMount {
  readonly path: string;
  readonly write: boolean;
}

/** Everything one contained call needs: the paths it sees other than read-only, and where it starts. */
export interface SandboxPlan {
  /** bwrap's own path, as the probe found it. */
  readonly program: string;
  /**
   * Paths bound over the read-only root: writable ones (the worktree, the CLI's home, a
   * private temp dir) and read-only ones inside them (the worktree's `.git` file, the
   * repository, the crew's out). Every path is absolute and exists.
   */
  readonly mounts: readonly SandboxMount[];
  readonly cwd: string;
}

/** A path as bwrap gets it: normalized, no trailing separator (`/a/b/` and `/a/b` are one mount). */
const clean = (path: string) => normalize(path).replace(/(?<=.)\/+$/, '');

/** How deep a path is: a deeper mount is bound later, so it wins inside the shallower one. */
function depth(path: string): number {
  return normalize(path).split(sep).filter((part) => part !== '').length;
}

/**
 * The argv that runs `argv` under bubblewrap by `plan`: the whole file system read-only
 * (`--ro-bind / /`), a fresh /dev and /proc, then each mount from the shallowest to the
 * deepest (so the repository inside a writable home stays read-only, and a worktree inside
 * a read-only repository stays writable; among equals, read-only last), every capability
 * dropped (bwrap run as root keeps them otherwise, and a capable call could remount).
 * No `--unshare-pid`: the supervisor's /proc census and group kill see the call's tree
 * with the pids they know. No `--new-session`: the call stays in the process group the
 * supervisor made (setsid would take it out), and it has no terminal to inject into. No
 * `--die-with-parent`: an agent outlives a killed crew to be adopted, never run twice.
 * The network is shared: the CLI reaches its model.
 */
export function bwrapArgv(plan: SandboxPlan, argv: readonly string[]): string[] {
  for (const mount of plan.mounts) if (!isAbsolute(mount.path)) throw new Error(`sandbox mount ${JSON.stringify(mount.path)} is not absolute`);
  const ordered = plan.mounts
    .map((mount, i) => ({ ...mount, path: clean(mount.path), i }))
    .sort((a, b) => depth(a.path) - depth(b.path) || Number(b.write) - Number(a.write) || a.i - b.i);
  const binds = ordered.flatMap((mount) => [mount.write ? '--bind' : '--ro-bind', mount.path, mount.path]);
  return [plan.program, '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', ...binds, '--cap-drop', 'ALL', '--chdir', plan.cwd, '--', ...argv];
}
