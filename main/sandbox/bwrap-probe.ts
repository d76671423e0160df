import { spawnSync } from 'node:child_process';
import { delimiter, join } from 'node:path';
import type { SandboxState } from '../../formats/sandbox/bwrap-argv.ts';
import { unrunnable } from '../process/runnable.ts';

/** What a probe reports: the sandbox, or why there is none. Facts only; the edge words them. */
export type ProbeResult = Exclude<SandboxState, { readonly kind: 'off' }>;

/** bubblewrap on `path` (PATH's directories, execvp's order), or null. */
export function findBwrap(path: string | undefined): string | null {
  for (const dir of (path ?? '').split(delimiter)) {
    if (dir === '') continue;
    const file = join(dir, 'bwrap');
    if (unrunnable(file) === null) return file;
  }
  return null;
}

/**
 * Whether laneward's sandbox can be had here: bwrap on PATH, and a probe run with the
 * options every contained call uses (read-only root, fresh /dev and /proc, capabilities
 * dropped) exits 0. A kernel without unprivileged user namespaces, or a container that
 * forbids mounts, fails the probe: that is said, never run around silently. What runs
 * inside is bwrap's own --version, by its path: the probe needs nothing else on PATH.
 */
export function probeBwrap(env: NodeJS.ProcessEnv): ProbeResult {
  const program = findBwrap(env['PATH']);
  if (program === null) return { kind: 'none', reason: 'bwrap is not on PATH (install bubblewrap)' };
  const probe = spawnSync(program, ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--cap-drop', 'ALL', '--', program, '--version'], { encoding: 'utf8', timeout: 10_000, env });
  if (probe.error !== undefined) return { kind: 'none', reason: `${program} could not be run (${(probe.error as NodeJS.ErrnoException).code ?? probe.error.message})` };
  if (probe.status !== 0) {
    const said = probe.stderr.trim().split('\n').at(-1) ?? '';
    return { kind: 'none', reason: `${program} failed its probe (exit ${probe.status ?? probe.signal}${said === '' ? '' : `: ${said}`})` };
  }
  return { kind: 'bwrap', program };
}
