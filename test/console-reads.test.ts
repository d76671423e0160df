import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { splitDiff } from '../formats/console/lane-diff.ts';
import { readLaneDiff } from '../main/console/lane-diff.ts';
import { readLaneGate } from '../main/console/lane-gate.ts';
import { baseRepo, git } from './helpers/git.ts';
import { tempRoot } from './helpers/tmp.ts';

// The console's reads on request: a workspace lane's diff (per file, bounded, argv only)
// and a waiting lane's gate for the inbox (read from its run directory as the lane page reads it).

const root = tempRoot('console-reads');

describe('splitDiff: a diff per file, bounded per file and in total', () => {
  const part = (name: string, body: string) => `diff --git a/${name} b/${name}\n${body}`;
  const text = part('a', 'x'.repeat(10) + '\n') + part('b', 'y'.repeat(100) + '\n') + part('c', 'z\n') + part('d', 'w\n');

  test('should keep each file whole within its bounds', () => {
    const { files, fileCount } = splitDiff(text, { perFile: 1_000, total: 10_000 }, false);
    expect(fileCount).toBe(4);
    expect(files.map((f) => [f.path, f.truncated])).toEqual([['a b/a', false], ['b b/b', false], ['c b/c', false], ['d b/d', false]].map(([p, t]) => [`a/${p}`, t]));
    expect(files.map((f) => f.text).join('')).toBe(text);
  });

  test('should cut a file at the per-file bound and stop showing files once the total is spent, counting them all', () => {
    const { files, fileCount } = splitDiff(text, { perFile: 40, total: 80 }, false);
    expect(fileCount).toBe(4);
    // a (30 chars) whole; b cut at 40; c's 21 in the 10 left, cut; d past the total, not shown.
    expect(files.map((f) => [f.path.split(' ')[0], f.text.length, f.chars, f.truncated])).toEqual([
      ['a/a', 30, 30, false],
      ['a/b', 40, 120, true],
      ['a/c', 10, 21, true],
    ]);
  });

  test('should mark the last file cut when git\'s output itself was cut', () => {
    const { files } = splitDiff(text, { perFile: 1_000, total: 10_000 }, true);
    expect(files.map((f) => f.truncated)).toEqual([false, false, false, true]);
  });

  test('should take a diff --git inside a file\'s lines for no file start unless it begins a line', () => {
    const { fileCount } = splitDiff(part('a', '+see diff --git a/x b/x\n'), { perFile: 1_000, total: 10_000 }, false);
    expect(fileCount).toBe(1);
  });
});

describe('readLaneDiff: git diff base...head in the crew\'s repository', () => {
  const repo = baseRepo(join(root, 'repo'));
  git(repo.dir, 'checkout', '-qb', 'lane');
  writeFileSync(join(repo.dir, 'a.txt'), 'one\ntwo\n');
  writeFileSync(join(repo.dir, 'new.txt'), 'new\n');
  git(repo.dir, 'add', '.');
  git(repo.dir, 'commit', '-qm', 'lane');
  const head = git(repo.dir, 'rev-parse', 'HEAD');
  // The base moves on after the lane left it: base...head is what the lane changed, not the base's later work.
  git(repo.dir, 'checkout', '-q', 'main');
  writeFileSync(join(repo.dir, 'later.txt'), 'later\n');
  git(repo.dir, 'add', '.');
  git(repo.dir, 'commit', '-qm', 'later on main');
  const moved = git(repo.dir, 'rev-parse', 'HEAD');

  test('should show what the lane\'s branch changed since it left the base, per file', async () => {
    const diff = await readLaneDiff({ repo: repo.dir, base: moved, head });
    expect(diff.status).toBe('ok');
    if (diff.status !== 'ok') return;
    expect([diff.fileCount, diff.cut, diff.files.map((f) => f.path)]).toEqual([2, false, ['a/a.txt b/a.txt', 'a/new.txt b/new.txt']]);
    expect(diff.files[0]!.text).toMatch(/\n one\n\+two\n$/);
  });

  test('should cut git\'s output at its byte bound and still count every file', async () => {
    const diff = await readLaneDiff({ repo: repo.dir, base: repo.base, head, bounds: { perFile: 10, total: 10 } });
    expect(diff.status).toBe('ok');
    if (diff.status !== 'ok') return;
    expect([diff.fileCount, diff.files.length, diff.files[0]!.truncated]).toEqual([2, 1, true]);
  });

  test.each([
    ['a head not yet made', { head: null }, 'the lane has no head commit yet'],
    ['an option for a base', { base: '--output=/tmp/x' }, 'the base or head is not a commit id'],
    ['a ref name for a head', { head: 'lane' }, 'the base or head is not a commit id'],
  ])('should give no diff for %s, and run no git with it', async (_name, change, detail) => {
    expect(await readLaneDiff({ repo: repo.dir, base: repo.base, head, ...change })).toEqual({ status: 'unavailable', detail });
  });

  test('should say git failed for a commit id the repository does not have', async () => {
    const diff = await readLaneDiff({ repo: repo.dir, base: repo.base, head: 'f'.repeat(40) });
    expect(diff.status).toBe('unavailable');
    expect(diff.status === 'unavailable' && diff.detail).toMatch(/^git diff [0-9a-f]{40}\.\.\.f{40} failed/);
  });
});

describe('readLaneGate: a waiting lane as the inbox shows it', () => {
  const gate = { schema_version: 1, run: 'r', gate_rev: 2, items: [{ id: 'd1', title: 'Roll <back>', kind: 'auto', options: [{ key: 'a', text: 'fix' }, { key: 'b', text: 'keep' }], recommended: 'a' }, { id: 'p1', title: 'Approve', kind: 'approval', options: [{ key: 'a', text: 'as is' }, { key: 'b', text: 'with changes' }], recommended: 'b' }] };

  test('should read the brief, the recommendation item by item and the findings, bounded', () => {
    const dir = join(root, 'run-1');
    mkdirSync(dir);
    writeFileSync(join(dir, 'brief.md'), '## URGENT\n<script>\n');
    writeFileSync(join(dir, 'gate.json'), JSON.stringify(gate));
    writeFileSync(join(dir, 'findings.jsonl'), `${Array.from({ length: 60 }, (_, i) => JSON.stringify({ id: `f${i}`, severity: 'High', title: `finding ${i}` })).join('\n')}\nnot json\n`);
    const read = readLaneGate('lane-1', dir);
    expect({ ...read, findings: read.findings.length }).toEqual({
      lane: 'lane-1',
      gateRev: 2,
      brief: '## URGENT\n<script>\n',
      briefTruncated: false,
      recommendation: 'd1a p1b',
      items: [
        { id: 'd1', title: 'Roll <back>', kind: 'auto', recommended: 'a', recommendedText: 'fix' },
        { id: 'p1', title: 'Approve', kind: 'approval', recommended: 'b', recommendedText: 'with changes' },
      ],
      findings: 50,
      findingsCount: 60,
    });
  });

  test('should follow no link out of the run directory: a linked brief and gate are missing', () => {
    const dir = join(root, 'run-2');
    mkdirSync(dir);
    const outside = join(root, 'secret.md');
    writeFileSync(outside, 'secret\n');
    symlinkSync(outside, join(dir, 'brief.md'));
    symlinkSync(outside, join(dir, 'gate.json'));
    expect(readLaneGate('lane-2', dir)).toEqual({ lane: 'lane-2', gateRev: null, brief: null, briefTruncated: false, recommendation: null, items: [], findings: [], findingsCount: 0 });
  });
});
