import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLanewardError } from '../formats/codes/error.ts';
import { loadCrew } from '../main/crew/load-crew.ts';
import { commitTurn } from '../main/crew/turn-commit.ts';
import { headOf } from '../main/crew/workspace-git.ts';
import { laneWorktree, laneWorktreePath, removeWorktree } from '../main/crew/workspace.ts';
import { worktreeChanges } from '../main/crew/worktree-changes.ts';
import { workspacePort } from '../main/crew/workspace-port.ts';
import type { LoadedWorkspace } from '../main/crew/check-workspace.ts';
import { symlinkSync, truncateSync } from 'node:fs';
import { branchNameProblem } from '../main/git/branch-name.ts';
import { ensureBuilt, laneward } from './helpers/cli.ts';
import { tempRoot } from './helpers/tmp.ts';

// A space in every path: git is given argv arrays, never a shell string.
const root = join(tempRoot('crew-workspace'), 'with space');
mkdirSync(root);
const repos: string[] = [];
let serial = 0;

/** Git for the test's own setup, in the same clean environment laneward runs it in. */
function g(cwd: string, ...args: string[]): string {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('GIT_')) env[key] = value;
  const result = spawnSync('git', ['-c', 'user.name=tester', '-c', 'user.email=tester@example.com', '-c', 'commit.gpgSign=false', ...args], {
    cwd,
    env: { ...env, LC_ALL: 'C' },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
  return result.stdout.trim();
}

/** A small repository: two tracked files, an ignore rule, one commit tagged v1. */
function repo(): { dir: string; out: string; base: string } {
  const dir = join(root, `repo ${++serial}`);
  mkdirSync(dir, { recursive: true });
  g(dir, 'init', '--quiet', '--initial-branch=main');
  writeFileSync(join(dir, 'a.txt'), 'one\ntwo\nthree\n');
  writeFileSync(join(dir, 'b.txt'), 'bee\n');
  writeFileSync(join(dir, '.gitignore'), '*.log\n');
  g(dir, 'add', '-A');
  g(dir, 'commit', '--quiet', '-m', 'initial');
  g(dir, 'tag', '-a', 'v1', '-m', 'version one');
  repos.push(dir);
  return { dir, out: join(root, `out ${serial}`), base: g(dir, 'rev-parse', 'HEAD') };
}

afterAll(() => {
  for (const dir of repos) if (existsSync(dir)) g(dir, 'worktree', 'prune');
});

async function refused(work: Promise<unknown> | (() => unknown), code: string): Promise<string> {
  try {
    await (typeof work === 'function' ? work() : work);
  } catch (error) {
    expect(isLanewardError(error) ? error.code : String(error)).toBe(code);
    return (error as Error).message;
  }
  throw new Error(`expected ${code}`);
}

describe('laneWorktree', () => {
  it('should make the lane worktree under the out on its own branch at base, and find it again', async () => {
    const r = repo();
    const made = await laneWorktree({ repo: r.dir, base: r.base, crew: 'nightly', lane: 'lane-1', run: 'r1', out: r.out });
    expect(made).toEqual({ path: join(r.out, 'lane-1', 'worktree'), branch: 'laneward/nightly/r1/lane-1', head: r.base, created: true });
    expect(laneWorktreePath(r.out, 'lane-1')).toBe(made.path);
    expect(g(made.path, 'symbolic-ref', 'HEAD')).toBe('refs/heads/laneward/nightly/r1/lane-1');
    expect(readFileSync(join(made.path, 'a.txt'), 'utf8')).toBe('one\ntwo\nthree\n');
    // Work left in it survives a crew started again.
    writeFileSync(join(made.path, 'work.txt'), 'in progress\n');
    const again = await laneWorktree({ repo: r.dir, base: r.base, crew: 'nightly', lane: 'lane-1', run: 'r1', out: r.out });
    expect(again).toEqual({ ...made, created: false });
    expect(readFileSync(join(made.path, 'work.txt'), 'utf8')).toBe('in progress\n');
  });

  it('should re-add the worktree of a branch that exists without one, at the branch head, not at base', async () => {
    const r = repo();
    const spec = { repo: r.dir, base: r.base, crew: 'c', lane: 'l', run: 'r1', out: r.out };
    const made = await laneWorktree(spec);
    writeFileSync(join(made.path, 'a.txt'), 'changed\n');
    const head = await commitTurn(made.path, { lane: 'l', turn: 1 });
    expect(await removeWorktree(made.path, { force: false })).toBe('removed');
    expect(existsSync(made.path)).toBe(false);
    const back = await laneWorktree(spec);
    expect(back).toMatchObject({ path: made.path, created: true, head });
    expect(readFileSync(join(back.path, 'a.txt'), 'utf8')).toBe('changed\n');
    // A worktree directory deleted by hand: git's stale registration is pruned and it is added again.
    rmSync(back.path, { recursive: true, force: true });
    expect(await laneWorktree(spec)).toMatchObject({ path: made.path, created: true, head });
  });

  it('should start over a worktree whose git worktree add was killed (left locked "initializing")', async () => {
    const r = repo();
    const spec = { repo: r.dir, base: r.base, crew: 'c', lane: 'l', run: 'r1', out: r.out };
    const made = await laneWorktree(spec);
    // What a SIGKILLed add leaves: its admin directory locked "initializing", a partial checkout.
    const admin = g(made.path, 'rev-parse', '--absolute-git-dir');
    writeFileSync(join(admin, 'locked'), 'initializing');
    unlinkSync(join(made.path, 'b.txt'));
    const again = await laneWorktree(spec);
    expect(again).toMatchObject({ path: made.path, created: true, head: r.base });
    expect(readFileSync(join(again.path, 'b.txt'), 'utf8')).toBe('bee\n');
    expect(g(r.dir, 'worktree', 'list', '--porcelain')).not.toContain('locked');
  });

  it('should refuse a branch checked out elsewhere and a foreign directory at its path, touching neither', async () => {
    const r = repo();
    g(r.dir, 'branch', 'laneward/c/r1/taken');
    const elsewhere = join(root, `elsewhere ${serial}`);
    g(r.dir, 'worktree', 'add', '--quiet', elsewhere, 'laneward/c/r1/taken');
    const message = await refused(laneWorktree({ repo: r.dir, base: r.base, crew: 'c', lane: 'taken', run: 'r1', out: r.out }), 'WORKSPACE_FAILED');
    expect(message).toContain('checked out in another worktree');
    const foreign = laneWorktreePath(r.out, 'mine');
    mkdirSync(foreign, { recursive: true });
    writeFileSync(join(foreign, 'keep.txt'), 'not laneward\n');
    expect(await refused(laneWorktree({ repo: r.dir, base: r.base, crew: 'c', lane: 'mine', run: 'r1', out: r.out }), 'WORKSPACE_FAILED')).toContain('is not a worktree');
    expect(readFileSync(join(foreign, 'keep.txt'), 'utf8')).toBe('not laneward\n');
  });

  it('should make the worktrees of many lanes at once on one repository', async () => {
    const r = repo();
    const lanes = ['l1', 'l2', 'l3', 'l4', 'l5', 'l6'];
    const made = await Promise.all(lanes.map((lane) => laneWorktree({ repo: r.dir, base: r.base, crew: 'c', lane, run: 'r1', out: r.out })));
    expect(made.map((m) => [m.branch, m.created, m.head])).toEqual(lanes.map((lane) => [`laneward/c/r1/${lane}`, true, r.base]));
    expect(new Set(made.map((m) => g(m.path, 'rev-parse', '--absolute-git-dir'))).size).toBe(lanes.length);
  });

  it('should add and remove the worktrees of 24 lanes at once on one repository, none failing on a sibling half-added', async () => {
    // git lists a sibling's half-written registry entry as "failed to read .../commondir"
    // (seen in a crew of eight real-CLI lanes): a repository's registry is changed one call at a time.
    const r = repo();
    const lanes = Array.from({ length: 24 }, (_, i) => `m${i}`);
    const first = await Promise.all(lanes.slice(0, 12).map((lane) => laneWorktree({ repo: r.dir, base: r.base, crew: 'c', lane, run: 'r1', out: r.out })));
    const [made, removed] = await Promise.all([
      Promise.all(lanes.slice(12).map((lane) => laneWorktree({ repo: r.dir, base: r.base, crew: 'c', lane, run: 'r1', out: r.out }))),
      Promise.all(first.map((m) => removeWorktree(m.path, { force: false }))),
    ]);
    expect(made.map((m) => m.created)).toEqual(lanes.slice(12).map(() => true));
    expect(removed).toEqual(first.map(() => 'removed'));
  });

  it('should refuse typed, not crash, on a missing repository, an option-looking base and a missing worktree', async () => {
    const r = repo();
    const missing = join(root, 'no such repo');
    expect(await refused(laneWorktree({ repo: missing, base: 'HEAD', crew: 'c', lane: 'l', run: 'r1', out: r.out }), 'WORKSPACE_FAILED')).toContain('is not a directory');
    expect(await refused(laneWorktree({ repo: r.dir, base: '--detach', crew: 'c', lane: 'l', run: 'r1', out: r.out }), 'WORKSPACE_FAILED')).toContain('is not a revision');
    expect(await refused(laneWorktree({ repo: r.dir, base: r.base, crew: 'c', lane: 'a..b', run: 'r1', out: r.out }), 'WORKSPACE_FAILED')).toContain('not a valid git branch name');
    await refused(commitTurn(missing, { lane: 'l', turn: 1 }), 'WORKSPACE_FAILED');
    await refused(worktreeChanges(missing), 'WORKSPACE_FAILED');
    await refused(headOf(missing), 'WORKSPACE_FAILED');
    await refused(worktreeChanges(r.dir, { since: '--output=x' }), 'WORKSPACE_FAILED');
    await refused(worktreeChanges(root), 'WORKSPACE_FAILED');
  });

  it('should start a lane at a tag base (an annotated tag, peeled to its commit)', async () => {
    const r = repo();
    g(r.dir, 'commit', '--quiet', '--allow-empty', '-m', 'after the tag');
    const made = await laneWorktree({ repo: r.dir, base: 'v1', crew: 'c', lane: 'tagged', run: 'r1', out: r.out });
    expect(made.head).toBe(r.base);
  });
});

describe('worktreeChanges', () => {
  it('should see modified, untracked and deleted files (not ignored ones), without touching the index', async () => {
    const r = repo();
    const { path } = await laneWorktree({ repo: r.dir, base: r.base, crew: 'c', lane: 'l', run: 'r1', out: r.out });
    expect(await worktreeChanges(path)).toEqual({ changed: false, files: 0, insertions: 0, deletions: 0 });
    writeFileSync(join(path, 'debug.log'), 'ignored\n');
    expect((await worktreeChanges(path)).changed).toBe(false);
    writeFileSync(join(path, 'a.txt'), 'one\nTWO\nthree\n');
    expect(await worktreeChanges(path)).toEqual({ changed: true, files: 1, insertions: 1, deletions: 1 });
    mkdirSync(join(path, 'new dir'));
    writeFileSync(join(path, 'new dir', 'c.txt'), 'x\ny\n');
    expect(await worktreeChanges(path)).toEqual({ changed: true, files: 2, insertions: 3, deletions: 1 });
    unlinkSync(join(path, 'b.txt'));
    expect(await worktreeChanges(path)).toEqual({ changed: true, files: 3, insertions: 3, deletions: 2 });
    // Read-only: nothing staged in the worktree's own index, no scratch index left behind.
    expect(g(path, 'diff', '--cached', '--name-only')).toBe('');
    const admin = g(path, 'rev-parse', '--absolute-git-dir');
    expect(readdirSync(admin).filter((name) => name.startsWith('laneward-'))).toEqual([]);
  });

  it('should count an agent\'s own commits when asked since a commit', async () => {
    const r = repo();
    const { path } = await laneWorktree({ repo: r.dir, base: r.base, crew: 'c', lane: 'l', run: 'r1', out: r.out });
    writeFileSync(join(path, 'a.txt'), 'rewritten\n');
    g(path, 'commit', '--quiet', '-am', 'the agent committed itself');
    expect((await worktreeChanges(path)).changed).toBe(false);
    expect(await worktreeChanges(path, { since: r.base })).toEqual({ changed: true, files: 1, insertions: 1, deletions: 3 });
  });
});

describe('commitTurn', () => {
  it('should commit everything as the lane turn with the fixed identity, no hooks, and return null when nothing changed', async () => {
    const r = repo();
    const { path } = await laneWorktree({ repo: r.dir, base: r.base, crew: 'c', lane: 'l', run: 'r1', out: r.out });
    // Hooks that would leave a mark, and an inherited identity that must not win.
    const marker = join(root, `hooked ${serial}`);
    for (const hook of ['pre-commit', 'commit-msg', 'post-commit']) {
      writeFileSync(join(r.dir, '.git', 'hooks', hook), `#!/bin/sh\necho ${hook} >> '${marker}'\nexit 1\n`);
      chmodSync(join(r.dir, '.git', 'hooks', hook), 0o755);
    }
    process.env.GIT_AUTHOR_NAME = 'intruder';
    try {
      writeFileSync(join(path, 'a.txt'), 'changed\n');
      writeFileSync(join(path, 'new.txt'), 'new\n');
      unlinkSync(join(path, 'b.txt'));
      const head = await commitTurn(path, { lane: 'l', turn: 1 });
      expect(head).toMatch(/^[0-9a-f]{40}$/);
      expect(await headOf(path)).toBe(head);
      expect(g(path, 'log', '-1', '--format=%an <%ae>|%cn <%ce>|%B')).toBe('laneward <laneward@localhost>|laneward <laneward@localhost>|laneward: l turn 1');
      expect(g(path, 'show', '--name-status', '--format=', 'HEAD').split('\n').sort()).toEqual(['A\tnew.txt', 'D\tb.txt', 'M\ta.txt']);
      expect(g(path, 'log', '-1', '--format=%G?')).toBe('N');
      expect(existsSync(marker)).toBe(false);
      expect(await commitTurn(path, { lane: 'l', turn: 2 })).toBeNull();
      expect(await headOf(path)).toBe(head);
    } finally {
      delete process.env.GIT_AUTHOR_NAME;
    }
  });

  it('should neither lose nor duplicate a turn committed again after a crash, and amend what came after into it', async () => {
    const r = repo();
    const { path } = await laneWorktree({ repo: r.dir, base: r.base, crew: 'c', lane: 'l', run: 'r1', out: r.out });
    writeFileSync(join(path, 'a.txt'), 'turn one\n');
    // Killed between staging and committing: the staged work is committed on the next call.
    g(path, 'add', '-A');
    const head = await commitTurn(path, { lane: 'l', turn: 1 });
    // Killed after committing, before the head was recorded: the same turn again is the same commit.
    expect(await commitTurn(path, { lane: 'l', turn: 1 })).toBe(head);
    writeFileSync(join(path, 'late.txt'), 'an orphan wrote this\n');
    const amended = await commitTurn(path, { lane: 'l', turn: 1 });
    expect(amended).not.toBe(head);
    expect(g(path, 'rev-list', '--count', `${r.base}..HEAD`)).toBe('1');
    expect(g(path, 'show', '--name-only', '--format=', 'HEAD').split('\n').sort()).toEqual(['a.txt', 'late.txt']);
  });

  it('should take over the index, HEAD and branch locks a SIGKILLed git left', async () => {
    const r = repo();
    const { path } = await laneWorktree({ repo: r.dir, base: r.base, crew: 'c', lane: 'l', run: 'r1', out: r.out });
    const admin = g(path, 'rev-parse', '--absolute-git-dir');
    writeFileSync(join(admin, 'index.lock'), '');
    writeFileSync(join(admin, 'HEAD.lock'), '');
    writeFileSync(join(r.dir, '.git', 'refs', 'heads', 'laneward', 'c', 'l.lock'), '');
    writeFileSync(join(path, 'a.txt'), 'after the crash\n');
    const head = await commitTurn(path, { lane: 'l', turn: 3 });
    expect(head).toBe(await headOf(path));
    expect(g(r.dir, 'rev-parse', 'laneward/c/r1/l')).toBe(head);
    expect(existsSync(join(admin, 'index.lock'))).toBe(false);
  });
});

describe('a turn too large for the crew file, refused before anything of it is committed', () => {
  // 1 KiB a file, 4 KiB a turn: the same rules as the defaults (10 MiB, 100 MiB), smaller.
  const limits = { maxFileBytes: 1024, maxTurnBytes: 4096 };
  async function lane(name: string) {
    const r = repo();
    const port = workspacePort({ repo: r.dir, base: 'HEAD', commit: r.base } as LoadedWorkspace, 'nightly', 'r1', r.out, limits);
    const made = await port.prepare(name, null);
    const tip = () => g(r.dir, 'rev-parse', `refs/heads/${made.branch}`);
    return { r, port, path: made.worktree, since: tip(), tip };
  }
  const big = (file: string, bytes: number) => {
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, '');
    truncateSync(file, bytes);
  };

  it('should refuse a big file in a subdirectory, naming it, and commit nothing', async () => {
    const l = await lane('l1');
    big(join(l.path, 'data', 'deep', 'big.bin'), 1025);
    writeFileSync(join(l.path, 'small.txt'), 'fine\n');
    const message = await refused(l.port.guard(l.path, 'l1', 1, l.since, null), 'WORKSPACE_TOO_LARGE');
    expect(message).toContain('adds data/deep/big.bin of 1025 bytes');
    expect(l.tip()).toBe(l.since);
    // The agent's files stay in the worktree for the operator; nothing of them is on the branch.
    expect(existsSync(join(l.path, 'data', 'deep', 'big.bin'))).toBe(true);
  });

  it("should take the agent's own commit of a big file off the branch, and one it deleted again in a later commit", async () => {
    for (const deletedAgain of [false, true]) {
      const name = deletedAgain ? 'l3' : 'l2';
      const l = await lane(name);
      big(join(l.path, 'big.bin'), 2048);
      g(l.path, 'add', '-A');
      g(l.path, 'commit', '--quiet', '-m', 'the agent commits by itself');
      if (deletedAgain) {
        g(l.path, 'rm', '--quiet', 'big.bin');
        g(l.path, 'commit', '--quiet', '-m', 'and deletes it: it is still in the history');
      }
      expect(await refused(l.port.guard(l.path, name, 1, l.since, null), 'WORKSPACE_TOO_LARGE')).toContain('adds big.bin of 2048 bytes');
      expect(l.tip()).toBe(l.since);
      expect(await headOf(l.path)).toBe(l.since);
    }
  });

  it('should take the turn off the branch even after a killed git left its locks (a crew killed inside the reset)', async () => {
    const l = await lane('l7');
    big(join(l.path, 'big.bin'), 2048);
    g(l.path, 'add', '-A');
    g(l.path, 'commit', '--quiet', '-m', 'the agent commits by itself');
    const gitDir = g(l.path, 'rev-parse', '--absolute-git-dir');
    writeFileSync(join(gitDir, 'index.lock'), '');
    expect(await refused(l.port.guard(l.path, 'l7', 1, l.since, null), 'WORKSPACE_TOO_LARGE')).toContain('adds big.bin of 2048 bytes');
    expect(l.tip()).toBe(l.since);
  });

  it('should refuse many files each under the file limit when the turn adds more than the turn limit', async () => {
    const l = await lane('l4');
    // Five different contents (git stores one content once, whatever the files holding it).
    mkdirSync(join(l.path, 'parts'));
    for (let i = 0; i < 5; i++) writeFileSync(join(l.path, 'parts', `part-${i}.bin`), Buffer.alloc(1000, i + 1));
    expect(await refused(l.port.guard(l.path, 'l4', 1, l.since, null), 'WORKSPACE_TOO_LARGE')).toContain('adds 5 files of 5000 bytes in all');
    expect(l.tip()).toBe(l.since);
  });

  it("should commit a symlink to a big file as git stores it (its target's path), and files under both limits", async () => {
    const l = await lane('l5');
    const outside = join(root, `outside ${serial}.bin`);
    big(outside, 1 << 20);
    symlinkSync(outside, join(l.path, 'link.bin'));
    for (let i = 0; i < 3; i++) big(join(l.path, `part-${i}.bin`), 1024);
    await l.port.guard(l.path, 'l5', 1, l.since, null);
    const head = await commitTurn(l.path, { lane: 'l5', turn: 1 });
    expect(l.tip()).toBe(head);
    expect(g(l.path, 'ls-tree', '--format=%(objectmode) %(objectsize) %(path)', 'HEAD', 'link.bin')).toBe(`120000 ${outside.length} link.bin`);
  });

  it('should refuse a turn that left its worktree off the lane branch (WORKSPACE_FAILED), naming where it is', async () => {
    const l = await lane('l6');
    g(l.path, 'checkout', '--quiet', '--detach');
    expect(await refused(l.port.guard(l.path, 'l6', 1, l.since, null), 'WORKSPACE_FAILED')).toContain('left its worktree on a detached HEAD, not on refs/heads/laneward/nightly/r1/l6');
  });
});

describe('removeWorktree', () => {
  it('should refuse a worktree with uncommitted changes unless forced, and keep the branch', async () => {
    const r = repo();
    const { path } = await laneWorktree({ repo: r.dir, base: r.base, crew: 'c', lane: 'l', run: 'r1', out: r.out });
    writeFileSync(join(path, 'untracked.txt'), 'work\n');
    expect(await refused(removeWorktree(path, { force: false }), 'WORKSPACE_DIRTY')).toContain('uncommitted changes: 1 files');
    expect(existsSync(join(path, 'untracked.txt'))).toBe(true);
    expect(await removeWorktree(path, { force: true })).toBe('removed');
    expect(existsSync(path)).toBe(false);
    expect(g(r.dir, 'rev-parse', '--verify', 'refs/heads/laneward/c/r1/l')).toBe(r.base);
    expect(await removeWorktree(path, { force: false })).toBe('absent');
    await refused(removeWorktree(r.dir, { force: true }), 'WORKSPACE_FAILED');
  });
});

describe('branch names', () => {
  it('should agree with git check-ref-format on the names a lane or crew can still make', () => {
    const names = ['laneward/c/lane-1', 'laneward/c/a..b', 'laneward/c/x.lock', 'laneward/c/v1.', 'laneward/c.lock/l', 'laneward/c/a.b_c-d', 'laneward/c/.hidden', 'laneward/c/lock', 'laneward/c/a.lock.b'];
    for (const name of names) {
      const git = spawnSync('git', ['check-ref-format', '--branch', name], { encoding: 'utf8' });
      expect({ name, valid: branchNameProblem(name) === null }).toEqual({ name, valid: git.status === 0 });
    }
  });
});

/** A crew file the loader accepts (plans exist; actions are not read at load). */
function crewFile(r: { dir: string }, edit: (crew: Record<string, any>) => void = () => {}): string {
  const dir = join(root, `crew ${++serial}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'plan.md'), '# plan\n');
  const crew: Record<string, any> = {
    schema_version: 1,
    crew: 'nightly',
    out: 'runs',
    actions: { file: 'actions.json', trust: 'actions.pub', reviewer: 'r', observer: 'o', agent: 'a' },
    models: { native: 'm1', outside: 'm2' },
    runners: { native: ['x'], outside: ['x'], observer: ['x'], agent: ['x'] },
    lanes: [{ id: 'l1', plan: 'plan.md' }, { id: 'l2', plan: 'plan.md' }, { id: 'l3', plan: 'plan.md' }],
    workspace: { repo: r.dir },
  };
  edit(crew);
  const file = join(dir, 'crew.json');
  writeFileSync(file, JSON.stringify(crew));
  return file;
}

describe('the crew file workspace', () => {
  it('should resolve the repo against the crew file and the base to one commit', () => {
    const r = repo();
    const loaded = loadCrew(crewFile(r, (c) => (c.workspace = { repo: join('..', basename(r.dir), '.'), base: 'v1' })), root);
    expect(loaded.workspace).toEqual({ repo: r.dir, base: 'v1', commit: r.base });
    expect(loadCrew(crewFile(r, (c) => delete c.workspace), root).workspace).toBeNull();
    // A remote-looking name resolves when the remote-tracking ref exists.
    g(r.dir, 'update-ref', 'refs/remotes/origin/main', 'HEAD');
    expect(loadCrew(crewFile(r, (c) => (c.workspace.base = 'origin/main')), root).workspace?.commit).toBe(r.base);
    // A subdirectory of the work tree names its top level.
    mkdirSync(join(r.dir, 'sub'));
    expect(loadCrew(crewFile(r, (c) => (c.workspace.repo = join(r.dir, 'sub'))), root).workspace?.repo).toBe(r.dir);
  });

  it.each([
    ['a directory that is not a git repository', (c: Record<string, any>) => (c.workspace.repo = root), /^workspace\.repo: .* is not a git work tree/],
    ['a repo that does not exist', (c: Record<string, any>) => (c.workspace.repo = 'nowhere'), /^workspace\.repo: .*nowhere is not a directory$/],
    ['a base that does not resolve', (c: Record<string, any>) => (c.workspace.base = 'no-such-branch'), /^workspace\.base: "no-such-branch" does not resolve to a commit in /],
    ['a remote-looking base with no such ref', (c: Record<string, any>) => (c.workspace.base = 'origin/nope'), /^workspace\.base: "origin\/nope" does not resolve/],
    ['an option-looking base', (c: Record<string, any>) => (c.workspace.base = '--output=/tmp/x'), /^workspace\.base: "--output=\/tmp\/x" starts with "-"/],
    ['an empty repo', (c: Record<string, any>) => (c.workspace.repo = ''), /^workspace\.repo: /],
    ['an unknown workspace field', (c: Record<string, any>) => (c.workspace.branch = 'x'), /^workspace\.branch: /],
    ['a lane id with ".."', (c: Record<string, any>) => (c.lanes[1].id = 'a..b'), /^lane a\.\.b: its branch laneward\/nightly\/<run id>\/a\.\.b is not a valid git branch name \(it contains "\.\."\)$/],
    ['a lane id ending ".lock"', (c: Record<string, any>) => (c.lanes[0].id = 'x.lock'), /^lane x\.lock: .*ends with "\.lock"/],
    ['a lane id ending "."', (c: Record<string, any>) => (c.lanes[2].id = 'v1.'), /^lane v1\.: .*ends with "\."/],
    ['a lane id starting "."', (c: Record<string, any>) => (c.lanes[2].id = '.hidden'), /^lanes\.2\.id: /],
    ['a crew name ending ".lock"', (c: Record<string, any>) => (c.crew = 'nightly.lock'), /^crew: "nightly\.lock" cannot be part of a git branch name/],
  ])('should refuse %s with CREW_INVALID naming the place', async (_what, edit, message) => {
    const r = repo();
    const file = crewFile(r, edit);
    expect(await refused(() => loadCrew(file, root), 'CREW_INVALID')).toMatch(message);
  });

  it('should refuse a repository with no commit yet (HEAD does not resolve)', async () => {
    const dir = join(root, `empty ${++serial}`);
    mkdirSync(dir);
    g(dir, 'init', '--quiet');
    expect(await refused(() => loadCrew(crewFile({ dir }), root), 'CREW_INVALID')).toMatch(/^workspace\.base: "HEAD" does not resolve/);
  });
});

describe('laneward crew clean', () => {
  beforeAll(() => ensureBuilt());

  it('should remove clean and gone worktrees, keep a dirty one (exit 3) until --force (exit 0), and keep every branch', async () => {
    const r = repo();
    const file = crewFile(r);
    const loaded = loadCrew(file, root);
    const spec = (lane: string) => ({ repo: r.dir, base: loaded.workspace!.commit, crew: 'nightly', lane, run: 'r1', out: loaded.out });
    const l1 = await laneWorktree(spec('l1'));
    const l2 = await laneWorktree(spec('l2'));
    const l3 = await laneWorktree(spec('l3'));
    writeFileSync(join(l1.path, 'a.txt'), 'committed\n');
    await commitTurn(l1.path, { lane: 'l1', turn: 1 });
    writeFileSync(join(l2.path, 'wip.txt'), 'uncommitted\n');
    rmSync(l3.path, { recursive: true, force: true });
    // A worktree elsewhere on the crew's branch namespace is never touched.
    g(r.dir, 'branch', 'laneward/nightly/other');
    const other = join(root, `other ${serial}`);
    g(r.dir, 'worktree', 'add', '--quiet', other, 'laneward/nightly/other');

    const first = laneward(['crew', 'clean', file]);
    expect(first.stderr).toBe('');
    expect(first.stdout.split('\n')).toEqual([
      `CREW_CLEAN: lane=l1 worktree=${l1.path} status=removed`,
      `CREW_CLEAN: lane=l2 worktree=${l2.path} status=kept code=WORKSPACE_DIRTY reason=${l2.path} has uncommitted changes: 1 files, +1 -0`,
      `CREW_CLEAN: lane=l3 worktree=${l3.path} status=pruned`,
      'CREW_CLEAN_SUMMARY: worktrees=3 removed=2 kept=1',
      '',
    ]);
    expect(first.code).toBe(3);
    expect(existsSync(join(l2.path, 'wip.txt'))).toBe(true);
    expect(existsSync(other)).toBe(true);

    const forced = laneward(['crew', 'clean', file, '--force', '--json']);
    expect(forced.code).toBe(0);
    expect(forced.stdout.trim().split('\n').map((line) => JSON.parse(line))).toEqual([
      { lane: 'l2', worktree: l2.path, branch: 'laneward/nightly/r1/l2', status: 'removed', code: null, reason: null },
      { summary: { worktrees: 1, removed: 1, kept: 0 } },
    ]);
    expect(existsSync(l2.path)).toBe(false);
    for (const lane of ['r1/l1', 'r1/l2', 'r1/l3', 'other']) expect(g(r.dir, 'rev-parse', '--verify', `refs/heads/laneward/nightly/${lane}`)).toMatch(/^[0-9a-f]{40}$/);
    expect(g(r.dir, 'worktree', 'list', '--porcelain')).not.toContain('prunable');

    const nothing = laneward(['crew', 'clean', file]);
    expect(nothing).toMatchObject({ code: 0, stdout: 'CREW_CLEAN_SUMMARY: worktrees=0 removed=0 kept=0\n', stderr: '' });
  });

  it('should refuse a crew file without a workspace (exit 2, CREW_INVALID) and a bad command line (exit 2, USAGE)', () => {
    const r = repo();
    const none = laneward(['crew', 'clean', crewFile(r, (c) => delete c.workspace)]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/workspace: the crew file names no workspace.*\(CREW_INVALID\)\n$/);
    const bad = laneward(['crew', 'clean', crewFile(r, (c) => (c.workspace.base = 'nope'))]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/workspace\.base: "nope" does not resolve.*\(CREW_INVALID\)\n$/);
    const usage = laneward(['crew', 'clean']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/\(USAGE\)\n$/);
    const help = laneward(['crew', 'clean', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: laneward crew clean CREW\.json \[--force\] \[--json\]/);
  });
});
