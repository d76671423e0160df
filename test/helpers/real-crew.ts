import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PresetName } from '../../formats/providers/names.ts';
import { fakeServerRunner } from '../../fixtures/model-server/crew-script.ts';
import { signedActions } from './actions.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BUNDLE = join(ROOT, 'dist', 'laneward.cjs');
export const CLI_BIN = join(ROOT, 'test', 'real-clis', 'node_modules', '.bin');

/** A small git repository with one commit, for a crew's workspace. */
export function gitRepo(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const git = (...args: string[]) => {
    const r = spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@localhost', ...args], { cwd: dir, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
    return r.stdout.trim();
  };
  git('init', '-q', '-b', 'main');
  writeFileSync(join(dir, 'README.md'), '# demo repository\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'start');
  return dir;
}

export function gitOut(dir: string, ...args: string[]): string {
  return spawnSync('git', args, { cwd: dir, encoding: 'utf8' }).stdout.trim();
}

/** Signed actions whose leases the presets' own streams renew. */
export function presetActions(root: string, extra: Record<string, unknown> = {}) {
  const lease = { timeout_mode: 'admitted_progress_inactivity', progress: 'preset', cleanup_reserve_ms: 100, post_provider_ms: 5_000, first_event_ms: 30_000, exit_after_terminal_ms: 5_000, ...extra };
  return signedActions(root, { review: lease, observe: lease, agent: lease });
}

export interface CrewFiles {
  readonly file: string;
  readonly state: string;
}

/**
 * A crew file of `lanes` lanes of real CLIs against the fake server at `baseUrl`: the
 * runners each preset named for its role (lane overrides by index), each with a private
 * home under `root/homes`.
 */
export function realCrew(
  root: string,
  baseUrl: string,
  options: {
    readonly crew: string;
    readonly lanes: number;
    readonly roles: Readonly<Record<'native' | 'outside' | 'observer' | 'agent', PresetName>>;
    readonly agentFor?: (i: number) => PresetName;
    readonly workspace?: string;
    readonly retries?: number;
    readonly limits?: Record<string, unknown>;
    readonly actions?: Record<string, unknown>;
    readonly planText?: (i: number) => string;
    /** USD per million tokens by model, over the default (gpt-5.5 at $1 in, $10 out). */
    readonly prices?: Record<string, { input: number; output: number }>;
    /** The crew file's "sandbox" (default: absent, which is auto). */
    readonly sandbox?: 'required' | 'auto' | 'off';
  },
): CrewFiles {
  mkdirSync(join(root, 'plans'), { recursive: true });
  const actions = presetActions(root, options.actions);
  const runner = (preset: PresetName, home: string) => fakeServerRunner(preset, baseUrl, join(root, 'homes', home), options.retries === undefined ? {} : { retries: options.retries });
  const lanes = Array.from({ length: options.lanes }, (_, i) => {
    const id = `lane-${i + 1}`;
    writeFileSync(join(root, 'plans', `${id}.md`), options.planText?.(i) ?? `# Plan ${id}\n\n## Implementation plan\n\n1. Keep notes of lane ${id} in NOTES.md.\n\n## Review record\n\nNothing yet.\n`);
    const agent = options.agentFor?.(i);
    return { id, plan: `plans/${id}.md`, ...(agent === undefined ? {} : { runners: { agent: runner(agent, `${id}-agent`) } }) };
  });
  const crew = {
    schema_version: 1,
    crew: options.crew,
    out: 'runs',
    actions: { file: actions.file, trust: actions.trust, reviewer: 'review', observer: 'observe', agent: 'agent' },
    models: { native: 'claude-sonnet-4-5', outside: 'gpt-5.5' },
    runners: {
      native: runner(options.roles.native, 'native'),
      outside: runner(options.roles.outside, 'outside'),
      observer: runner(options.roles.observer, 'observer'),
      agent: runner(options.roles.agent, 'agent'),
    },
    ...(options.workspace === undefined ? {} : { workspace: { repo: options.workspace } }),
    ...(options.sandbox === undefined ? {} : { sandbox: options.sandbox }),
    // codex reports tokens, not dollars: $1 in, $10 out per million (0.0015 per fake reply).
    prices: { 'gpt-5.5': { input: 1, output: 10 }, ...options.prices },
    limits: { concurrency: 4, agent_turns: 4, timeout_ms: 20_000, ...options.limits },
    lanes,
  };
  const file = join(root, 'crew.json');
  writeFileSync(file, `${JSON.stringify(crew, null, 2)}\n`);
  return { file, state: join(root, 'state') };
}

export interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The built CLI, spawned (never spawnSync: the test's own model server must keep answering). */
export function lanewardAsync(args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): { pid: number; done: Promise<Ran> } {
  const child = spawn(process.execPath, [BUNDLE, ...args], {
    cwd: options.cwd,
    env: { ...process.env, NO_COLOR: '1', PATH: `${CLI_BIN}:${process.env['PATH'] ?? ''}`, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
  const done = new Promise<Ran>((ok) =>
    child.on('close', (code) => {
      if (timer !== undefined) clearTimeout(timer);
      ok({ code, stdout, stderr });
    }),
  );
  return { pid: child.pid!, done };
}

export function laneLines(stdout: string): Record<string, string>[] {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('CREW_LANE: '))
    .map((l) => Object.fromEntries([...l.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!])));
}
