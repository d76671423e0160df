import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pinOf } from '../../formats/providers/pins.ts';
import type { PresetName } from '../../formats/providers/names.ts';
import { LanewardError } from '../../formats/codes/error.ts';
import { crewScript, fakeServerRunner } from '../model-server/crew-script.ts';
import { startModelServer, type ModelServer } from '../model-server/index.ts';
import { writeSignedActions } from './demo-crew.ts';
import { makeDirs } from '../fs/make-dirs.ts';
import { gitSync } from '../git/run-git.ts';
import { installClis } from '../providers/install.ts';
import { cacheDirOf, locateCli } from '../providers/locate.ts';

/** The CLIs a real demo crew runs: claude-code reviews natively and observes, codex reviews from outside; agents alternate. */
const DEMO_PRESETS: readonly PresetName[] = ['claude-code', 'codex'];

/**
 * Every CLI the demo runs, found as laneward finds them, or installed at its pinned
 * version into laneward's cache (saying so) when missing: a demo never fails for want of one.
 */
export async function demoClis(cwd: string, env: NodeJS.ProcessEnv, io: { err(line: string): void }): Promise<Record<PresetName, string>> {
  const missing = DEMO_PRESETS.filter((preset) => locateCli(pinOf(preset), { cwd, env }).path === null);
  if (missing.length > 0) {
    io.err(`DEMO: ${missing.join(', ')} not found: installing the pinned versions into ${cacheDirOf(env, cwd)}`);
    await installClis(missing.map(pinOf), cacheDirOf(env, cwd), io, { env });
  }
  const found = {} as Record<PresetName, string>;
  for (const preset of DEMO_PRESETS) {
    const path = locateCli(pinOf(preset), { cwd, env }).path;
    if (path === null) throw new LanewardError('PROVIDER_INSTALL_FAILED', `${pinOf(preset).binary} is still not found after the install`);
    found[preset] = path;
  }
  return found;
}

export interface RealDemo {
  readonly file: string;
  readonly server: ModelServer;
  readonly repo: string;
}

/**
 * Writes a crew of real agent CLIs against a model server of its own on loopback: a small
 * git repository the agents work in (one worktree and branch per lane), signed actions
 * whose leases the CLIs' own streams renew, `lanes` lanes of claude-code and codex.
 */
export async function writeRealDemo(options: { readonly dir: string; readonly crew: string; readonly lanes: number; readonly concurrency: number; readonly bins: Readonly<Record<PresetName, string>> }): Promise<RealDemo> {
  const { dir } = options;
  makeDirs(join(dir, 'plans'));
  const repo = join(dir, 'repo');
  makeDirs(repo);
  const git = (...args: string[]) => {
    const ran = gitSync(['-c', 'user.name=laneward demo', '-c', 'user.email=demo@localhost', ...args], { cwd: repo });
    if (ran.status !== 0) throw new LanewardError('WORKSPACE_FAILED', `git ${args[0]} in ${repo}: ${ran.stderr.trim()}`, { path: repo });
  };
  git('init', '-q', '-b', 'main');
  writeFileSync(join(repo, 'README.md'), '# A small repository the demo agents work in\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'start');
  const lease = { timeout_mode: 'admitted_progress_inactivity', progress: 'preset', cleanup_reserve_ms: 100, post_provider_ms: 5_000, first_event_ms: 60_000, exit_after_terminal_ms: 10_000 };
  writeSignedActions(dir, { review: lease, observe: lease, agent: lease });
  const server = await startModelServer(crewScript({ doneAt: 2 }));
  const runner = (preset: PresetName, home: string) => ({ ...fakeServerRunner(preset, server.url, join(dir, 'homes', home)), bin: options.bins[preset] });
  const lanes = Array.from({ length: options.lanes }, (_, i) => {
    const id = `lane-${i + 1}`;
    writeFileSync(join(dir, 'plans', `${id}.md`), `# Plan ${id}\n\n## Implementation plan\n\n1. Keep notes of ${id}'s work in NOTES.md.\n\n## Review record\n\nNothing yet.\n`);
    // Agents alternate: codex in odd lanes, claude-code in even ones.
    return { id, plan: `plans/${id}.md`, runners: { agent: runner(i % 2 === 0 ? 'codex' : 'claude-code', `${id}-agent`) } };
  });
  const crew = {
    schema_version: 1,
    crew: options.crew,
    out: 'runs',
    actions: { file: 'actions.json', trust: 'keys/actions.pub', reviewer: 'review', observer: 'observe', agent: 'agent' },
    models: { native: 'claude-sonnet-4-5', outside: 'gpt-5.5' },
    runners: { native: runner('claude-code', 'native'), outside: runner('codex', 'outside'), observer: runner('claude-code', 'observer'), agent: runner('codex', 'agent') },
    prices: { 'gpt-5.5': { input: 1.25, output: 10, cached_input: 0.125 } },
    workspace: { repo: 'repo' },
    answer: 'as-is',
    limits: { concurrency: options.concurrency, agent_turns: 4, timeout_ms: 60_000 },
    lanes,
  };
  const file = join(dir, 'crew.json');
  writeFileSync(file, `${JSON.stringify(crew, null, 2)}\n`);
  return { file, server, repo };
}
