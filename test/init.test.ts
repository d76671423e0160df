import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { crewNameOf } from '../main/cli/init.ts';
import { crewFiles, planText } from '../main/init/crew-files.ts';
import { MAX_TASK_CHARS, MAX_TASK_FILE_BYTES, parseTaskList } from '../main/init/task-list.ts';
import { writeCrewDir } from '../main/init/write-crew.ts';
import { codesOf, ensureBuilt, laneward } from './helpers/cli.ts';
import { gitRepo } from './helpers/real-crew.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('init');
let repo: string;
beforeAll(() => {
  ensureBuilt();
  repo = gitRepo(join(root, 'repo'));
});

/** Every path under a directory, relative, sorted (what a refused init must leave as it was). */
function tree(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return (readdirSync(dir, { recursive: true }) as string[]).sort();
}

describe('parseTaskList', () => {
  test.each([
    ['one task per line', 'Add a cache\n\nWrite the docs\n', ['Add a cache', 'Write the docs']],
    ['lines starting with # are skipped', '# my tasks\nAdd a cache\n  # later\n', ['Add a cache']],
    ['a Markdown list: -, *, +, 1. and 1)', '# Tasks\n\nIntro prose.\n\n- one\n* two\n+ three\n1. four\n2) five\n', ['one', 'two', 'three', 'four', 'five']],
    ['an indented line continues its item', '- write the docs\n  for the cache\n- fix it\n', ['write the docs for the cache', 'fix it']],
    ['prose between items is not a task', '- one\nnot a task\n- two\n', ['one', 'two']],
    ['CRLF, a BOM and inner runs of spaces', '\uFEFFAdd   a cache\r\nFix it\r\n', ['Add a cache', 'Fix it']],
    ['an empty item is skipped', '- \n- real\n', ['real']],
    ['nothing', '\n\n# only a heading\n', []],
  ])('should read %s', (_name, text, tasks) => {
    expect(parseTaskList(text)).toEqual({ ok: true, tasks });
  });

  test('should refuse a task over MAX_TASK_CHARS with its line number', () => {
    expect(parseTaskList(`short\n${'x'.repeat(MAX_TASK_CHARS + 1)}\n`)).toEqual({ ok: false, line: 2, problem: `the task is ${MAX_TASK_CHARS + 1} characters, over ${MAX_TASK_CHARS}` });
  }, 180_000);
});

describe('crewFiles', () => {
  const keys = { privatePem: 'PRIVATE\n', publicPem: 'PUBLIC\n', sign: () => 'SIG\n' };
  const spec = (providers: Parameters<typeof crewFiles>[0]['providers'], tasks = ['a', 'b', 'c']) => ({ crew: 'c', repo: '../repo', tasks, providers, fixtures: '/f', node: '/n' });
  const crewOf = (files: ReturnType<typeof crewFiles>) => JSON.parse(files.find((f) => f.path === 'crew.json')!.content);

  test('should write crew.json last, after every file it names, and the key 0600', () => {
    const files = crewFiles(spec(['claude-code', 'codex']), keys);
    expect(files.map((f) => f.path)).toEqual(['keys/actions.key', 'keys/actions.pub', 'actions.json', 'actions.json.sig', 'plans/task-1.md', 'plans/task-2.md', 'plans/task-3.md', 'crew.json']);
    expect(files[0]!.mode).toBe(0o600);
  }, 180_000);

  test('should give the roles to the presets in order and the agents in turn by lane', () => {
    const crew = crewOf(crewFiles(spec(['claude-code', 'codex']), keys));
    expect([crew.runners.native.preset, crew.runners.outside.preset, crew.runners.observer.preset, crew.runners.agent.preset]).toEqual(['claude-code', 'codex', 'claude-code', 'claude-code']);
    expect(crew.lanes.map((l: { runners?: { agent: { preset: string } } }) => l.runners?.agent.preset ?? crew.runners.agent.preset)).toEqual(['claude-code', 'codex', 'claude-code']);
    expect(crew.models).toEqual({ native: 'claude-sonnet-4-5', outside: 'gpt-5.5' });
    // codex reports tokens, not dollars: its default model is priced, so its calls are not unpriced.
    expect(Object.keys(crew.prices)).toEqual(['gpt-5.5']);
    expect(crew.workspace).toEqual({ repo: '../repo' });
  }, 180_000);

  test('should make the first preset whose stream names tools the observer', () => {
    const crew = crewOf(crewFiles(spec(['gemini-cli', 'codex']), keys));
    expect([crew.runners.native.preset, crew.runners.outside.preset, crew.runners.observer.preset]).toEqual(['gemini-cli', 'codex', 'codex']);
    expect(() => crewFiles(spec(['gemini-cli']), keys)).toThrow(expect.objectContaining({ code: 'USAGE' }));
  }, 180_000);

  test('should pad lane ids so they sort as the tasks do', () => {
    const crew = crewOf(crewFiles(spec('fixtures', Array.from({ length: 10 }, (_, i) => `t${i}`)), keys));
    expect(crew.lanes.map((l: { id: string }) => l.id).slice(0, 2)).toEqual(['task-01', 'task-02']);
    expect(crew.lanes.at(-1).id).toBe('task-10');
  }, 180_000);

  test('should write the two headings and the task, a leading # escaped', () => {
    expect(planText('Add a cache')).toBe('# Add a cache\n\n## Implementation plan\n\nAdd a cache\n\n## Review record\n\nNothing yet.\n');
    expect(planText('## Review record')).toMatch(/^# \\## Review record\n\n## Implementation plan\n\n\\## Review record\n/);
    expect(planText('## Review record').match(/^## /gm)).toEqual(['## ', '## ']);
  }, 180_000);
});

describe('writeCrewDir', () => {
  const files = [
    { path: 'keys/actions.key', content: 'k', mode: 0o600 },
    { path: 'crew.json', content: '{}', mode: 0o644 },
  ];

  test('should write a new directory whole, keys/ private, and leave no staging directory beside it', () => {
    const parent = join(root, 'write-new');
    mkdirSync(parent);
    writeCrewDir(join(parent, 'crew'), files);
    expect(tree(join(parent, 'crew'))).toEqual(['crew.json', 'keys', 'keys/actions.key']);
    expect(statSync(join(parent, 'crew', 'keys')).mode & 0o777).toBe(0o700);
    expect(statSync(join(parent, 'crew', 'keys', 'actions.key')).mode & 0o777).toBe(0o600);
    expect(readdirSync(parent)).toEqual(['crew']);
  }, 180_000);

  test('should write into an empty directory', () => {
    const dir = join(root, 'write-empty');
    mkdirSync(dir);
    writeCrewDir(dir, files);
    expect(tree(dir)).toEqual(['crew.json', 'keys', 'keys/actions.key']);
  }, 180_000);

  test.each([
    ['a file it would write', 'crew.json', 'crew.json'],
    ['a file it would write, in a subdirectory', 'keys/actions.key', 'keys/actions.key'],
    ['anything else', 'notes.txt', 'notes.txt'],
  ])('should refuse a directory holding %s (INIT_EXISTS naming it) and change nothing', (_name, present, named) => {
    const parent = join(root, `refuse-${present.replace('/', '-')}`);
    const dir = join(parent, 'crew');
    mkdirSync(dirname(join(dir, present)), { recursive: true });
    writeFileSync(join(dir, present), 'mine');
    const before = tree(parent);
    let thrown: unknown;
    try {
      writeCrewDir(dir, files);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: 'INIT_EXISTS', path: join(dir, named) });
    expect(tree(parent)).toEqual(before);
    expect(readFileSync(join(dir, present), 'utf8')).toBe('mine');
  });
});

describe('crewNameOf', () => {
  test.each([
    ['/x/my-repo', 'my-repo'],
    ['/x/My Repo (2)', 'My-Repo-2-'],
    ['/x/.hidden', 'hidden'],
    ['/x/___', 'crew'],
  ])('should name %s %s', (dir, name) => {
    expect(crewNameOf(dir)).toBe(name);
  });
});

describe('laneward init', () => {
  test('should write a fixture crew that crew run completes, and print the one command that runs it', () => {
    const cwd = join(root, 'cli-fixtures');
    mkdirSync(cwd);
    writeFileSync(join(cwd, 'tasks.md'), '# Tasks\n\n- Add a cache\n- Write the docs\n');
    const init = laneward(['init', '--repo', repo, '--tasks', 'tasks.md', '--providers', 'fixtures', '--crew', 'fx'], { cwd });
    expect(init.code, init.stderr).toBe(0);
    const lines = init.stdout.trim().split('\n');
    expect(lines[0]).toBe(`INIT: crew=fx dir=${join(cwd, 'laneward-crew')} lanes=2 providers=fixtures`);
    expect(lines.filter((l) => l.startsWith('INIT_FILE: ')).length).toBe(7);
    // Fixtures need no key: no rehearsal line.
    expect(lines.at(-1)).toBe('INIT_RUN: laneward crew run laneward-crew/crew.json');
    expect(readFileSync(join(cwd, 'laneward-crew', 'plans', 'task-2.md'), 'utf8')).toContain('## Implementation plan\n\nWrite the docs\n');
    // The printed command, as printed (laneward is the bundle here).
    const words = lines.at(-1)!.replace('INIT_RUN: laneward ', '').split(' ');
    const ran = laneward([...words, '--state', join(cwd, 'state')], { cwd, timeoutMs: 120_000 });
    expect(ran.stdout, ran.stderr).toMatch(/^CREW_SUMMARY: lanes=2 complete=2 failed=0 interrupted=0 /m);
    expect(ran.code).toBe(0);
    // Each lane's branch carries the crew run's id (one for the whole run).
    const branches = spawnSync('git', ['branch', '--list', 'laneward/fx/*', '--format=%(refname:short)'], { cwd: repo, encoding: 'utf8' }).stdout.trim().split('\n');
    expect(branches).toHaveLength(2);
    const runId = /^laneward\/fx\/(\d{8}T\d{6}Z-[0-9a-f]{6})\/task-1$/.exec(branches[0]!)?.[1];
    expect(branches).toEqual([`laneward/fx/${runId}/task-1`, `laneward/fx/${runId}/task-2`]);
  }, 180_000);

  test('should print INIT_RUN and INIT_REHEARSE for presets, and --json one object', () => {
    const cwd = join(root, 'cli-presets');
    mkdirSync(cwd);
    const init = laneward(['init', '--repo', repo, '--task', 'Add a cache', '--task', 'Fix   the bug', '--out', 'c', '--json'], { cwd });
    expect(init.code, init.stderr).toBe(0);
    const object = JSON.parse(init.stdout);
    expect(object).toMatchObject({ crew: 'repo', dir: join(cwd, 'c'), lanes: 2, providers: 'claude-code,codex', run: 'laneward crew run c/crew.json', rehearse: 'laneward crew run c/crew.json --rehearse' });
    expect(readFileSync(join(cwd, 'c', 'plans', 'task-2.md'), 'utf8')).toMatch(/^# Fix the bug\n/);
    // The actions are signed with the key init wrote.
    const verified = laneward(['actions', 'verify', join(cwd, 'c', 'actions.json'), '--trust', join(cwd, 'c', 'keys', 'actions.pub')], { cwd });
    expect(verified.code, verified.stderr).toBe(0);
  }, 180_000);

  test('should refuse to write over a crew it wrote before (exit 2 INIT_EXISTS) and leave it as it was', () => {
    const cwd = join(root, 'cli-twice');
    mkdirSync(cwd);
    const args = ['init', '--repo', repo, '--task', 'Add a cache'];
    expect(laneward(args, { cwd }).code).toBe(0);
    const before = tree(cwd).map((p) => [p, statSync(join(cwd, p)).isFile() ? readFileSync(join(cwd, p), 'utf8') : 'dir']);
    const again = laneward(args, { cwd });
    expect(again.code).toBe(2);
    expect(codesOf(again.stderr)).toEqual(['INIT_EXISTS']);
    expect(again.stderr).toContain(join(cwd, 'laneward-crew', 'keys', 'actions.key'));
    expect(again.stdout).toBe('');
    expect(tree(cwd).map((p) => [p, statSync(join(cwd, p)).isFile() ? readFileSync(join(cwd, p), 'utf8') : 'dir'])).toEqual(before);
  }, 180_000);

  test.each([
    ['no --repo', ['--task', 'a'], 'USAGE'],
    ['neither --tasks nor --task', ['--repo', 'REPO'], 'USAGE'],
    ['both --tasks and --task', ['--repo', 'REPO', '--tasks', 'tasks.txt', '--task', 'a'], 'USAGE'],
    ['a task file with no task', ['--repo', 'REPO', '--tasks', 'empty.txt'], 'USAGE'],
    ['a task file that does not exist', ['--repo', 'REPO', '--tasks', 'absent.txt'], 'USAGE'],
    ['an unknown preset', ['--repo', 'REPO', '--task', 'a', '--providers', 'claude-code,cdex'], 'USAGE'],
    ['a preset twice', ['--repo', 'REPO', '--task', 'a', '--providers', 'codex,codex'], 'USAGE'],
    ['presets none of which can observe', ['--repo', 'REPO', '--task', 'a', '--providers', 'gemini-cli'], 'USAGE'],
    ['a repository that is not a git work tree', ['--repo', '.', '--task', 'a'], 'USAGE'],
    ['a bad crew name', ['--repo', 'REPO', '--task', 'a', '--crew', '-x'], 'USAGE'],
  ])('should refuse %s (exit 2 %s) and write nothing', (_name, args, code) => {
    const cwd = join(root, `cli-bad-${_name.replace(/\W+/g, '-')}`);
    mkdirSync(cwd);
    writeFileSync(join(cwd, 'empty.txt'), '\n# nothing\n');
    writeFileSync(join(cwd, 'tasks.txt'), 'a\n');
    const ran = laneward(['init', ...args.map((a) => (a === 'REPO' ? repo : a))], { cwd });
    expect(ran.code, ran.stderr).toBe(2);
    expect(codesOf(ran.stderr)).toEqual([code]);
    expect(tree(cwd)).toEqual(['empty.txt', 'tasks.txt']);
  });

  // Each of these hung init (a FIFO), read without end (/dev/zero) or wrote U+FFFD into a plan.
  test.each([
    ['a FIFO', (path: string) => spawnSync('mkfifo', [path]), /is not a regular file \(a FIFO\)/],
    ['a directory', (path: string) => mkdirSync(path), /is not a regular file \(a directory\)/],
    ['a symlink to /dev/zero', (path: string) => symlinkSync('/dev/zero', path), /is not a regular file \(a character device\)/],
    ['over MAX_TASK_FILE_BYTES', (path: string) => writeFileSync(path, 'a task\n'.repeat(MAX_TASK_FILE_BYTES / 7 + 1)), /is over \d+ bytes/],
    ['invalid UTF-8', (path: string) => writeFileSync(path, Buffer.from([0x61, 0x0a, 0xff, 0xfe, 0x0a])), /is not UTF-8 text/],
    ['NUL bytes', (path: string) => writeFileSync(path, 'a\n\u0000b\n'), /holds NUL bytes/],
  ])('should refuse --tasks %s (exit 2 USAGE) without reading past it, writing nothing', (name, make, detail) => {
    const cwd = join(root, `cli-tasks-${name.replace(/\W+/g, '-')}`);
    mkdirSync(cwd);
    make(join(cwd, 'tasks'));
    const ran = laneward(['init', '--repo', repo, '--tasks', 'tasks'], { cwd, timeoutMs: 30_000 });
    expect(ran.code, ran.stderr).toBe(2);
    expect(codesOf(ran.stderr)).toEqual(['USAGE']);
    expect(ran.stderr).toMatch(detail);
    expect(tree(cwd)).toEqual(['tasks']);
  });
});
