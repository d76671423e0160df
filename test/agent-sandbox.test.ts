import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { bwrapArgv } from '../formats/sandbox/bwrap-argv.ts';
import { containedSpec, laneMounts } from '../main/sandbox/agent-sandbox.ts';
import { findBwrap, probeBwrap } from '../main/sandbox/bwrap-probe.ts';
import { changedRefs, readOnlyWrites } from '../main/sandbox/turn-refusals.ts';
import { nowMs } from '../workers/supervise/monotonic-timer.ts';
import { supervise } from '../workers/supervise/supervise.ts';
import { SUPERVISION_DEFAULTS, type SupervisionSpec } from '../workers/supervise/spec.ts';
import { canRun, killQuietly, pidsIn, sleep } from './helpers/procs.ts';
import { tempRoot } from './helpers/tmp.ts';
import { codesOf, ensureBuilt } from './helpers/cli.ts';
import { codeOf } from './helpers/thrown.ts';
import { CLI_BIN, gitRepo, lanewardAsync, realCrew } from './helpers/real-crew.ts';
import { sandboxFor } from '../main/sandbox/crew-sandbox.ts';
import { crewEventLine } from '../main/cli/crew-lines.ts';
import { exitStatus } from '../formats/codes/exit-status.ts';
import type { SandboxState } from '../formats/sandbox/bwrap-argv.ts';

const root = tempRoot('sandbox');
beforeAll(() => ensureBuilt());
const BWRAP = findBwrap(process.env['PATH']);

/** The bind options of an argv, as [option, path] pairs in order. */
function binds(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) if (argv[i] === '--bind' || argv[i] === '--ro-bind') out.push(`${argv[i] === '--bind' ? 'rw' : 'ro'} ${argv[i + 1]}`);
  return out;
}

describe('bwrapArgv', () => {
  test('should bind / read-only first, then each mount shallowest first, read-only after writable at one depth, and end with the call', () => {
    const argv = bwrapArgv(
      {
        program: '/usr/bin/bwrap',
        mounts: [
          { path: '/home/u/repo/runs/lane-1/worktree', write: true },
          { path: '/home/u', write: true },
          { path: '/home/u/repo/runs/lane-1/worktree/.git', write: false },
          { path: '/home/u/repo', write: false },
          { path: '/home/u/repo/', write: true },
        ],
        cwd: '/home/u/repo/runs/lane-1/worktree',
      },
      ['claude', '-p'],
    );
    expect(binds(argv)).toEqual(['ro /', 'rw /home/u', 'rw /home/u/repo', 'ro /home/u/repo', 'rw /home/u/repo/runs/lane-1/worktree', 'ro /home/u/repo/runs/lane-1/worktree/.git']);
    expect(argv.slice(0, 1)).toEqual(['/usr/bin/bwrap']);
    expect(argv.slice(-7)).toEqual(['--cap-drop', 'ALL', '--chdir', '/home/u/repo/runs/lane-1/worktree', '--', 'claude', '-p']);
    // A fresh /dev and /proc, every capability dropped; the pid namespace, session and
    // parent-death tie are the supervisor's and stay as they are.
    expect(argv.join(' ')).toContain('--dev /dev --proc /proc');
    expect(argv.join(' ')).toContain('--cap-drop ALL');
    for (const absent of ['--unshare-pid', '--new-session', '--die-with-parent', '--unshare-net', '--unshare-all']) expect(argv).not.toContain(absent);
  });

  test('should refuse a relative mount', () => {
    expect(() => bwrapArgv({ program: 'bwrap', mounts: [{ path: 'worktree', write: true }], cwd: '/' }, ['x'])).toThrow(/not absolute/);
  });
});

/** A repository with a lane worktree inside the crew's out, both under a home the CLI writes. */
function layout(name: string) {
  const home = join(root, name, 'home');
  const repo = join(home, 'repo');
  const out = join(repo, 'runs');
  const runDir = join(out, 'lane-1');
  const worktree = join(runDir, 'worktree');
  const other = join(out, 'lane-2', 'worktree');
  mkdirSync(repo, { recursive: true });
  const git = (cwd: string, ...args: string[]) => {
    const r = spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@localhost', ...args], { cwd, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
    return r.stdout.trim();
  };
  git(repo, 'init', '-q', '-b', 'main');
  writeFileSync(join(repo, 'README.md'), 'x\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'start');
  mkdirSync(out, { recursive: true });
  git(repo, 'worktree', 'add', '-q', '-b', 'lane-1', worktree);
  git(repo, 'worktree', 'add', '-q', '-b', 'lane-2', other);
  return { home, repo, out, runDir, worktree, other, commonDir: join(repo, '.git'), git };
}

describe('laneMounts', () => {
  test('should make writable the CLI\'s own directories, a private tmp in the run directory and the worktree; read-only the repo, its git dir, the out and the .git file', () => {
    const l = layout('mounts');
    const paths = { worktree: l.worktree, repo: l.repo, commonDir: l.commonDir, out: l.out, runDir: l.runDir };
    const shown = (mounts: readonly { path: string; write: boolean }[]) => mounts.map((m) => `${m.write ? 'rw' : 'ro'} ${m.path}`);
    const tail = [`ro ${l.repo}`, `ro ${l.commonDir}`, `ro ${l.out}`, `rw ${l.worktree}`, `ro ${join(l.worktree, '.git')}`];
    const tmp = join(l.runDir, 'agent', 'tmp');
    // codex: its CODEX_HOME (made when missing), never HOME itself.
    const codex = laneMounts(paths, 'codex', { HOME: l.home, CODEX_HOME: join(l.home, 'codex') }, undefined);
    expect([codex.tmp, existsSync(tmp), existsSync(join(l.home, 'codex'))]).toEqual([tmp, true, true]);
    expect(shown(codex.mounts)).toEqual([`rw ${join(l.home, 'codex')}`, `rw ${tmp}`, ...tail]);
    expect(shown(laneMounts(paths, 'codex', { HOME: l.home }, undefined).mounts)[0]).toBe(`rw ${join(l.home, '.codex')}`);
    // claude: ~/.claude, and ~/.claude.json once it exists (a file bound as itself).
    expect(shown(laneMounts(paths, 'claude-code', { HOME: l.home }, undefined).mounts)).toEqual([`rw ${join(l.home, '.claude')}`, `rw ${tmp}`, ...tail]);
    writeFileSync(join(l.home, '.claude.json'), '{}\n');
    expect(shown(laneMounts(paths, 'claude-code', { HOME: l.home }, undefined).mounts)).toEqual([`rw ${join(l.home, '.claude')}`, `rw ${tmp}`, `rw ${join(l.home, '.claude.json')}`, ...tail]);
    // gemini: <GEMINI_CLI_HOME or HOME>/.gemini, and the runner's own TMPDIR is its tmp.
    const gemini = laneMounts(paths, 'gemini-cli', { HOME: l.home, GEMINI_CLI_HOME: l.home }, join(l.home, 'tmp'));
    expect(gemini.tmp).toBe(join(l.home, 'tmp'));
    expect(shown(gemini.mounts)).toEqual([`rw ${join(l.home, '.gemini')}`, `rw ${join(l.home, 'tmp')}`, ...tail]);
    // An argv agent has no CLI directories.
    expect(shown(laneMounts(paths, undefined, { HOME: l.home }, undefined).mounts)).toEqual([`rw ${tmp}`, ...tail]);
  });
});

describe('containedSpec', () => {
  const spec = (argv: string[], env: Record<string, string> = {}): SupervisionSpec => ({
    argv,
    env,
    stdio: 'pipe',
    mode: 'total_deadline',
    progress: null,
    timeoutMs: 1_500,
    cleanupReserveMs: 0,
    postProviderMs: 1_000,
    graceMs: 200,
    teardownMs: SUPERVISION_DEFAULTS.teardownMs,
    stdoutLimit: SUPERVISION_DEFAULTS.stdoutLimit,
    stderrLimit: SUPERVISION_DEFAULTS.stderrLimit,
    startedAt: nowMs(),
    action: null,
    descriptorSha256: null,
  });

  test('should leave the spec as it is with no sandbox, and wrap it with a private TMPDIR under bwrap', () => {
    const l = layout('wrap');
    const paths = { worktree: l.worktree, repo: l.repo, commonDir: l.commonDir, out: l.out, runDir: l.runDir };
    const plain: SupervisionSpec = { ...spec(['claude', '-p'], { HOME: l.home }), provider: 'claude-code' };
    expect(containedSpec(plain, { kind: 'none', reason: 'r' }, paths)).toBe(plain);
    expect(containedSpec(plain, { kind: 'off' }, paths)).toBe(plain);
    const wrapped = containedSpec(plain, { kind: 'bwrap', program: '/usr/bin/bwrap' }, paths);
    const tmp = join(l.runDir, 'agent', 'tmp');
    expect(wrapped.argv.slice(0, 1)).toEqual(['/usr/bin/bwrap']);
    expect(wrapped.argv.slice(-3)).toEqual(['--', 'claude', '-p']);
    expect(wrapped.env).toEqual({ HOME: l.home, TMPDIR: tmp, TMP: tmp, TEMP: tmp });
    // A runner that sets its own TMPDIR keeps it.
    expect(containedSpec({ ...spec(['gemini'], { HOME: l.home, TMPDIR: l.home }), provider: 'gemini-cli' }, { kind: 'bwrap', program: '/usr/bin/bwrap' }, paths).env).toEqual({ HOME: l.home, TMPDIR: l.home });
  });

  test("should, under the real bwrap, refuse writes outside the worktree and the CLI's directories and every ref move, and let the worktree, the CLI's directory and tmp be written", () => {
    expect(BWRAP, 'bubblewrap is installed (apt-get install bubblewrap)').not.toBeNull();
    const l = layout('real');
    const paths = { worktree: l.worktree, repo: l.repo, commonDir: l.commonDir, out: l.out, runDir: l.runDir };
    const refs = l.git(l.repo, 'for-each-ref', '--format=%(refname) %(objectname)');
    const script = [
      ['up', 'echo x > ../../up.txt'],
      ['repo', `echo x > ${join(l.repo, 'README.md')}`],
      ['other-lane', `echo x > ${join(l.other, 'x.txt')}`],
      ['git-file', 'echo gitdir: /elsewhere > .git'],
      ['branch', 'git branch hostile'],
      ['update-ref', 'git update-ref refs/heads/main HEAD'],
      ['index', 'git add -A'],
      ['gitconfig', `echo x > ${join(l.home, '.gitconfig')}`],
      ['worktree', 'echo ok > NOTES.md'],
      ['cli-home', `echo ok > ${join(l.home, '.claude', 'settings.json')}`],
      ['tmp', 'echo ok > "$TMPDIR/t"'],
    ]
      .map(([name, command]) => `{ ${command}; } 2>/dev/null && echo ${name}=done || echo ${name}=refused`)
      .join('; ');
    const wrapped = containedSpec({ ...spec(['bash', '-c', script], { HOME: l.home }), provider: 'claude-code' }, { kind: 'bwrap', program: BWRAP! }, paths);
    const ran = spawnSync(wrapped.argv[0]!, wrapped.argv.slice(1), { encoding: 'utf8', env: { ...process.env, ...wrapped.env } });
    expect(ran.stdout.trim().split('\n')).toEqual(['up=refused', 'repo=refused', 'other-lane=refused', 'git-file=refused', 'branch=refused', 'update-ref=refused', 'index=refused', 'gitconfig=refused', 'worktree=done', 'cli-home=done', 'tmp=done']);
    expect(l.git(l.repo, 'for-each-ref', '--format=%(refname) %(objectname)')).toBe(refs);
    expect(readFileSync(join(l.repo, 'README.md'), 'utf8')).toBe('x\n');
    expect(readFileSync(join(l.worktree, '.git'), 'utf8')).toMatch(/^gitdir: /);
    expect(existsSync(join(l.other, 'x.txt'))).toBe(false);
  });

  test('should keep the teardown proof: a contained tree past its deadline is torn down whole, cleanupConfirmed', async () => {
    expect(BWRAP, 'bubblewrap is installed (apt-get install bubblewrap)').not.toBeNull();
    const l = layout('teardown');
    const paths = { worktree: l.worktree, repo: l.repo, commonDir: l.commonDir, out: l.out, runDir: l.runDir };
    const pidfile = join(l.worktree, 'pids');
    // bwrap, the shell and a background sleep: without a pid namespace the pids written inside are the host's.
    const wrapped = containedSpec(spec(['bash', '-c', `sleep 41 & echo $! > ${pidfile}; echo $$ >> ${pidfile}; sleep 42`], { HOME: l.home }), { kind: 'bwrap', program: BWRAP! }, paths);
    const outcome = await supervise({ ...wrapped, cwd: l.worktree });
    expect({ code: outcome.code, cleanupConfirmed: outcome.cleanupConfirmed }).toEqual({ code: 'DEADLINE_EXPIRED', cleanupConfirmed: true });
    const pids = pidsIn(pidfile);
    expect(pids).toHaveLength(2);
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline && pids.some(canRun)) await sleep(50);
    const left = pids.filter(canRun);
    // A failure leaves nothing running either (with --new-session the tree escapes the group kill).
    for (const pid of left) killQuietly(pid);
    expect(left).toEqual([]);
  }, 20_000);
});

describe('the crew\'s sandbox', () => {
  test('should be off as asked, none with the reason where bwrap is missing, and refuse a crew that requires it (SANDBOX_UNAVAILABLE)', () => {
    const nothing = { PATH: join(root, 'nothing') };
    expect(sandboxFor('off', nothing, 'crew.json')).toEqual({ kind: 'off' });
    expect(sandboxFor('auto', nothing, 'crew.json')).toEqual({ kind: 'none', reason: 'bwrap is not on PATH (install bubblewrap)' });
    expect([codeOf(() => sandboxFor('required', nothing, 'crew.json')), exitStatus('SANDBOX_UNAVAILABLE')]).toEqual(['SANDBOX_UNAVAILABLE', 3]);
    expect(sandboxFor('required', process.env, 'crew.json')).toEqual({ kind: 'bwrap', program: BWRAP });
  });

  test('should say on the crew\'s stderr whether its agents are contained, and why not', () => {
    const line = (state: SandboxState) => crewEventLine({ type: 'sandbox', state }, false);
    expect(line({ kind: 'bwrap', program: '/usr/bin/bwrap' })).toEqual({ to: 'err', text: 'CREW_SANDBOX: sandbox=bwrap program=/usr/bin/bwrap' });
    expect(line({ kind: 'none', reason: 'bwrap is not on PATH (install bubblewrap)' })).toEqual({ to: 'err', text: 'CREW_SANDBOX: sandbox=none reason=bwrap is not on PATH (install bubblewrap); agents run uncontained' });
    expect(line({ kind: 'off' })).toEqual({ to: 'err', text: 'CREW_SANDBOX: sandbox=off reason=the crew file sets "sandbox": "off"; agents run uncontained' });
  });

  test('should refuse crew run of a crew that requires the sandbox where bwrap is not on PATH: exit 3, one error line, no lane started', async () => {
    const dir = join(root, 'required');
    const repo = gitRepo(join(dir, 'repo'));
    const crew = realCrew(dir, 'http://127.0.0.1:9', { crew: 'req', lanes: 1, roles: { native: 'claude-code', outside: 'claude-code', observer: 'claude-code', agent: 'claude-code' }, workspace: repo, sandbox: 'required' });
    // PATH with git and sh but no bwrap (the CLIs come first on it, as lanewardAsync puts them).
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    for (const tool of ['git', 'sh']) symlinkSync(spawnSync('/bin/sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim(), join(bin, tool));
    const ran = await lanewardAsync(['crew', 'run', crew.file, '--state', crew.state], { cwd: dir, env: { PATH: `${CLI_BIN}:${bin}` }, timeoutMs: 60_000 }).done;
    expect([ran.code, codesOf(ran.stderr), ran.stdout]).toEqual([3, ['SANDBOX_UNAVAILABLE'], '']);
    expect(ran.stderr).toMatch(/^laneward crew run: .*sandbox: the crew file requires the agent sandbox, and bwrap is not on PATH \(install bubblewrap\).*\(SANDBOX_UNAVAILABLE\)$/m);
  }, 60_000);
});

describe('the probe and the turn evidence', () => {
  test('should find no sandbox without bwrap on PATH, and pass the probe with the real one', () => {
    expect(probeBwrap({ PATH: join(root, 'nothing') })).toEqual({ kind: 'none', reason: 'bwrap is not on PATH (install bubblewrap)' });
    expect(probeBwrap(process.env)).toEqual({ kind: 'bwrap', program: BWRAP });
  });

  test('should count each refused write once per event, and list the refs that moved but the lanes\' own', () => {
    const stream = join(root, 'stream.jsonl');
    const twice = 'a: Read-only file system\nb: Read-only file system';
    writeFileSync(stream, `${JSON.stringify({ type: 'user', content: twice, tool_use_result: { stdout: twice } })}\n{"type":"other"}\nnot json: Read-only file system\n`);
    expect(readOnlyWrites(stream)).toBe(3);
    expect(readOnlyWrites(join(root, 'absent.jsonl'))).toBe(0);
    const before = new Map([['HEAD', 'a'], ['refs/heads/main', 'a'], ['refs/heads/laneward/c/r/lane-1', 'a']]);
    const after = new Map([['HEAD', 'a'], ['refs/heads/main', 'b'], ['refs/heads/laneward/c/r/lane-1', 'b'], ['refs/heads/x', 'a']]);
    expect(changedRefs(before, after, 'refs/heads/laneward/c/r/')).toEqual(['refs/heads/main', 'refs/heads/x']);
  });
});
