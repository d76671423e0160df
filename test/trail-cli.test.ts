import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { BUNDLE, codesOf, ensureBuilt, laneward } from './helpers/cli.ts';
import { exitOf } from './helpers/procs.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('trail-cli');
beforeAll(ensureBuilt);

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
let n = 0;
const fresh = () => join(root, `t${n++}.tsv`);
const rowsOf = (file: string) => readFileSync(file, 'utf8').slice(0, -1).split('\n').slice(1).map((line) => line.split('\t'));

function cli(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BUNDLE, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    void exitOf(child).then(({ code }) => resolve({ code, stdout, stderr }));
  });
}

describe('laneward trail help', () => {
  test.each([
    [['trail', '--help'], 0, 'usage: laneward trail <start|append> FILE ... [--json]'],
    [['trail', 'start', '--help'], 0, 'usage: laneward trail start FILE RUN [--json]'],
    [['trail', 'append', '--help'], 0, 'usage: laneward trail append FILE PHASE DECISION WHY EVIDENCE RESULT [--run RUN] [--json]'],
    [['trail'], 2, 'usage: laneward trail <start|append> FILE ... [--json]'],
  ])('should print help for %j with exit %i', (args, code, first) => {
    const result = laneward(args);
    expect(result.code).toBe(code);
    expect(result.stdout.split('\n')[0]).toBe(first);
  });

  test('should list trail in the main help', () => {
    expect(laneward(['--help']).stdout).toContain('\n  trail start|append ');
  });
});

describe('laneward trail start and append', () => {
  test('should start, append formula cells safely and stay idempotent on a repeated start', () => {
    const file = fresh();
    expect(laneward(['trail', 'start', file, 'r1'])).toEqual({ code: 0, stdout: 'TRAIL: start run=r1 row=1\n', stderr: '' });
    expect(laneward(['trail', 'start', file, 'r1'])).toEqual({ code: 0, stdout: 'TRAIL: start run=r1 row=1 already\n', stderr: '' });
    const cells = ['=HYPERLINK("x")', '+1', '-1', '@SUM(A1)', 'a\nb\tc'];
    expect(laneward(['trail', 'append', file, '--run', 'r1', '--', ...cells])).toEqual({
      code: 0,
      stdout: `TRAIL: appended row=2 file=${file}\n`,
      stderr: '',
    });
    const rows = rowsOf(file);
    expect(readFileSync(file, 'utf8').split('\n')[0]).toBe('at\trun\tphase\tdecision\twhy\tevidence\tresult');
    expect(rows).toHaveLength(2);
    expect(rows[0]!.slice(1)).toEqual(['r1', 'start', 'join', 'first rows of this trail', '-', 'started']);
    expect(rows[1]![0]).toMatch(ISO);
    expect(rows[1]!.slice(1)).toEqual(['r1', `'=HYPERLINK("x")`, "'+1", "'-1", "'@SUM(A1)", 'a\\nb\\tc']);
  });

  test('should refuse an append for a run that has not started with DECISION_TRAIL_START_REQUIRED, exit 3, writing nothing', () => {
    const file = fresh();
    const none = laneward(['trail', 'append', file, 'eng', 'd', 'w', 'e', 'r', '--run', 'r2']);
    expect(none.code).toBe(3);
    expect(none.stdout).toBe('');
    expect(codesOf(none.stderr)).toEqual(['DECISION_TRAIL_START_REQUIRED']);
    expect(existsSync(file)).toBe(false);

    laneward(['trail', 'start', file, 'r1']);
    const before = readFileSync(file, 'utf8');
    const other = laneward(['trail', 'append', file, 'eng', 'd', 'w', 'e', 'r', '--run', 'r2']);
    expect(other.code).toBe(3);
    expect(codesOf(other.stderr)).toEqual(['DECISION_TRAIL_START_REQUIRED']);
    expect(other.stderr).toContain('(the newest start row (row 1) names run r1, not r2 at ');
    expect(readFileSync(file, 'utf8')).toBe(before);

    const json = laneward(['trail', 'append', file, 'eng', 'd', 'w', 'e', 'r', '--run', 'r2', '--json']);
    expect(json.code).toBe(3);
    expect(json.stderr).toBe('');
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, code: 'DECISION_TRAIL_START_REQUIRED', path: file });

    // Without --run the row always goes in.
    expect(laneward(['trail', 'append', file, 'eng', 'd', 'w', 'e', 'r']).stdout).toBe(`TRAIL: appended row=2 file=${file}\n`);
    expect(laneward(['trail', 'start', file, 'r2']).stdout).toBe('TRAIL: start run=r2 row=3\n');
    expect(laneward(['trail', 'append', file, 'eng', 'd', 'w', 'e', 'r', '--run', 'r2']).stdout).toBe(`TRAIL: appended row=4 file=${file}\n`);
    expect(rowsOf(file)[2]!.slice(1)).toEqual(['r2', 'start', 'join', 'follows rows 1-2 (runs: r1)', `${file.split('/').pop()}:2-3`, 'started']);
  });

  test('should print one JSON object under --json', () => {
    const file = fresh();
    const started = JSON.parse(laneward(['trail', 'start', file, 'r1', '--json']).stdout);
    expect(started).toEqual({ started: true, already: false, run: 'r1', row: 1, file, at: expect.stringMatching(ISO) });
    expect(JSON.parse(laneward(['trail', 'start', file, 'r1', '--json']).stdout)).toEqual({
      started: false,
      already: true,
      run: 'r1',
      row: 1,
      file,
      at: null,
    });
    const appended = JSON.parse(laneward(['trail', 'append', file, 'eng', 'd', 'w', 'e', 'r', '--json']).stdout);
    expect(appended).toEqual({ appended: true, row: 2, file, at: expect.stringMatching(ISO), run: null });
  });

  test('should escape a run id with a line break in its output line', () => {
    const file = fresh();
    const result = laneward(['trail', 'start', file, 'a\nTRAIL: start run=x row=9']);
    expect(result.stdout).toBe('TRAIL: start run=a\\nTRAIL: start run=x row=9 row=1\n');
    expect(rowsOf(file)[0]![1]).toBe('a\\nTRAIL: start run=x row=9');
  });

  test.each([
    [['trail', 'append', 'F', 'eng', 'd', 'w', 'e']],
    [['trail', 'append', 'F', 'start', 'd', 'w', 'e', 'r']],
    [['trail', 'append', 'F', 'eng', 'd', 'w', '-1', 'r']],
    [['trail', 'append', 'F', 'eng', 'd', 'w', 'e', 'r', '--run', '-']],
    [['trail', 'start', 'F']],
    [['trail', 'start', 'F', '']],
    [['trail', 'stop', 'F', 'r1']],
  ])('should refuse %j as USAGE with exit 2 and write nothing', (args) => {
    const result = laneward(args, { cwd: root });
    expect(result.code).toBe(2);
    expect(codesOf(result.stderr)).toEqual(['USAGE']);
    expect(existsSync(join(root, 'F'))).toBe(false);
  });

  test.each([
    ['a FIFO', (path: string) => void spawnSync('mkfifo', [path])],
    ['a directory', (path: string) => mkdirSync(path)],
  ])('should refuse %s at FILE with TRAIL_UNREADABLE (exit 3) at once, never hanging', (_name, make) => {
    const file = fresh();
    make(file);
    for (const args of [['trail', 'append', file, 'eng', 'd', 'w', 'e', 'r'], ['trail', 'start', file, 'r1']]) {
      const child = spawnSync(process.execPath, [BUNDLE, ...args], { encoding: 'utf8', timeout: 20_000 });
      expect(child.signal).toBeNull();
      expect(child.status).toBe(3);
      expect(codesOf(child.stderr)).toEqual(['TRAIL_UNREADABLE']);
    }
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  test('should work the same under deno', () => {
    const file = fresh();
    expect(laneward(['trail', 'start', file, 'r1'], { runtime: 'deno' }).stdout).toBe('TRAIL: start run=r1 row=1\n');
    expect(laneward(['trail', 'append', file, '--run', 'r1', '--', 'eng', '=1', 'w', 'e', 'r'], { runtime: 'deno' }).stdout).toBe(
      `TRAIL: appended row=2 file=${file}\n`,
    );
    expect(rowsOf(file)[1]!.slice(1)).toEqual(['r1', 'eng', "'=1", 'w', 'e', 'r']);
  });
});

describe('laneward trail from many processes at once', () => {
  test('should write one start row for 10 concurrent starts of one run and number 20 concurrent appends 2..21', async () => {
    const file = fresh();
    const starts = await Promise.all(Array.from({ length: 10 }, () => cli(['trail', 'start', file, 'r9'])));
    expect(starts.filter((result) => result.stdout === 'TRAIL: start run=r9 row=1\n')).toHaveLength(1);
    expect(starts.filter((result) => result.stdout === 'TRAIL: start run=r9 row=1 already\n')).toHaveLength(9);
    expect(starts.every((result) => result.code === 0 && result.stderr === '')).toBe(true);

    const appends = await Promise.all(
      Array.from({ length: 20 }, (_, index) => cli(['trail', 'append', file, 'loop', `d${index}`, 'w', 'e', 'r', '--run', 'r9'])),
    );
    expect(appends.every((result) => result.code === 0)).toBe(true);
    const printed = appends.map((result) => Number(/^TRAIL: appended row=(\d+) file=/.exec(result.stdout)?.[1])).sort((a, b) => a - b);
    expect(printed).toEqual(Array.from({ length: 20 }, (_, index) => index + 2));
    const rows = rowsOf(file);
    expect(rows).toHaveLength(21);
    expect(rows.filter((cells) => cells[2] === 'start')).toHaveLength(1);
    expect(new Set(rows.slice(1).map((cells) => cells[3]))).toEqual(new Set(Array.from({ length: 20 }, (_, index) => `d${index}`)));
    for (const cells of rows) expect(cells).toHaveLength(7);
    // Each printed row number names the line its own row landed on.
    for (const [index, result] of appends.entries()) {
      const row = Number(/row=(\d+)/.exec(result.stdout)?.[1]);
      expect(rows[row - 1]![3]).toBe(`d${index}`);
    }
  });
});
