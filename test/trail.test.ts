import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync, statSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { buildSync } from 'esbuild';
import { beforeAll, describe, expect, test } from 'vitest';
import { isLanewardError } from '../formats/codes/error.ts';
import {
  newestStart,
  parseTrail,
  renderTrailRow,
  startNames,
  startRow,
  TRAIL_COLUMNS,
  TRAIL_HEADER,
  trailCell,
} from '../formats/trail/tsv.ts';
import { processStart } from '../main/process/process-alive.ts';
import { acquireLock } from '../main/fs/file-lock.ts';
import { appendTrail, startTrail } from '../main/trail/trail-file.ts';
import { ROOT } from './helpers/cli.ts';
import { waitingOn } from './helpers/lock-watch.ts';
import { canRun, exitOf } from './helpers/procs.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('trail');
const AT = '2026-12-01T00:00:00.000Z';
const FIELDS = { phase: 'eng', decision: 'keep', why: 'simpler', evidence: 'plan.md:12', result: 'done' };

function lines(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  return text.slice(0, -1).split('\n');
}

let n = 0;
const fresh = () => join(root, `t${n++}.tsv`);

describe('trailCell', () => {
  test.each([
    ['=1+1', "'=1+1"],
    ['+1', "'+1"],
    ['-1', "'-1"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['  =1+1', "'  =1+1"],
    ['\u00a0@x', "'\u00a0@x"],
    ['\u3000=x', "'\u3000=x"],
    ['\uff1dHYPERLINK()', "'\uff1dHYPERLINK()"],
    ['\uff0b1', "'\uff0b1"],
    ['\uff0d1', "'\uff0d1"],
    ['\uff20x', "'\uff20x"],
    ['\u22121', "'\u22121"],
    ['\ufe66x', "'\ufe66x"],
    ["'quoted", "''quoted"],
    ['\t=1', "'\\t=1"],
    ['\tplain', "'\\tplain"],
    ['\rplain', "'\\rplain"],
    ['\n=1', "'\\n=1"],
    // A zero width space is a format character: written out, and the formula behind it still quoted.
    ['\u200b=1', "'\\u200b=1"],
    ['\ufeff=1', "'\\ufeff=1"],
    ['a=1', 'a=1'],
    ['plan.md:12', 'plan.md:12'],
    ['-', '-'],
    ['', '-'],
  ])('should make %j formula-safe as %j', (value, cell) => {
    expect(trailCell(value)).toBe(cell);
  });

  test.each([
    ['a\nb', 'a\\nb'],
    ['a\r\nb', 'a\\r\\nb'],
    ['a\tb', 'a\\tb'],
    ['a\u0000b\u0007c\u001bd\u007fe', 'a\\u0000b\\u0007c\\u001bd\\u007fe'],
    ['a\u0085b\u009fc', 'a\\u0085b\\u009fc'],
    ['a\u2028b\u2029c', 'a\\u2028b\\u2029c'],
    ['a\u202eb\u2066c', 'a\\u202eb\\u2066c'],
  ])('should flatten control characters in %j to %j', (value, cell) => {
    expect(trailCell(value)).toBe(cell);
  });

  test('should leave no character that could split a row or a column in any cell', () => {
    for (let code = 0; code < 0x3000; code++) {
      const cell = trailCell(`x${String.fromCharCode(code)}y`);
      expect(cell).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/);
    }
  });
});

describe('renderTrailRow and parseTrail', () => {
  test('should render one line of seven cells and parse it back as written', () => {
    const line = renderTrailRow({ at: AT, run: 'r1', phase: 'eng', decision: '=x', why: 'a\tb\nc', evidence: '', result: '-2' });
    expect(line).toBe(`${AT}\tr1\teng\t'=x\ta\\tb\\nc\t-\t'-2\n`);
    const parsed = parseTrail(TRAIL_HEADER + line);
    expect(parsed.header).toBe(TRAIL_COLUMNS.join('\t'));
    expect(parsed.tornTail).toBe(false);
    expect(parsed.rows).toEqual([{ row: 1, cells: [AT, 'r1', 'eng', "'=x", 'a\\tb\\nc', '-', "'-2"] }]);
  });

  test('should report a last line without its newline as a torn tail', () => {
    const parsed = parseTrail(`${TRAIL_HEADER}${AT}\tr1\teng`);
    expect(parsed.tornTail).toBe(true);
    expect(parsed.rows).toHaveLength(1);
    expect(parseTrail('')).toEqual({ header: undefined, rows: [], tornTail: false });
  });

  test('should find the newest start row and compare runs as written', () => {
    const text =
      TRAIL_HEADER +
      renderTrailRow({ at: AT, run: 'a', phase: 'start', decision: 'join', why: '', evidence: '', result: '' }) +
      renderTrailRow({ at: AT, run: '=b', phase: 'start', decision: 'join', why: '', evidence: '', result: '' }) +
      renderTrailRow({ at: AT, run: 'a', phase: 'start-ish', decision: 'x', why: '', evidence: '', result: '' });
    const parsed = parseTrail(text);
    expect(newestStart(parsed)).toEqual({ row: 2, run: "'=b" });
    expect(startNames(parsed, '=b')).toBe(true);
    expect(startNames(parsed, 'a')).toBe(false);
  });

  test('should name the earlier rows by line and their runs in a start row', () => {
    const text =
      TRAIL_HEADER +
      renderTrailRow({ at: AT, run: 'a', ...FIELDS }) +
      renderTrailRow({ at: AT, run: '', ...FIELDS }) +
      renderTrailRow({ at: AT, run: 'b', ...FIELDS }) +
      renderTrailRow({ at: AT, run: 'a', ...FIELDS });
    expect(startRow(parseTrail(text), 'c', 'decisions.tsv', AT)).toEqual({
      at: AT,
      run: 'c',
      phase: 'start',
      decision: 'join',
      why: 'follows rows 1-4 (runs: a, b)',
      evidence: 'decisions.tsv:2-5',
      result: 'started',
    });
    expect(startRow(parseTrail(''), 'c', 'decisions.tsv', AT).why).toBe('first rows of this trail');
  });
});

describe('appendTrail and startTrail', () => {
  test('should write the header once, then one line per row with exact row numbers', () => {
    const file = fresh();
    expect(appendTrail(file, FIELDS, undefined, AT)).toEqual({ kind: 'appended', row: 1, at: AT });
    expect(appendTrail(file, { ...FIELDS, why: 'x\ny' }, undefined, AT)).toEqual({ kind: 'appended', row: 2, at: AT });
    expect(lines(file)).toEqual([
      'at\trun\tphase\tdecision\twhy\tevidence\tresult',
      `${AT}\t-\teng\tkeep\tsimpler\tplan.md:12\tdone`,
      `${AT}\t-\teng\tkeep\tx\\ny\tplan.md:12\tdone`,
    ]);
  });

  test('should make start idempotent and refuse --run appends until the newest start row names the run', () => {
    const file = fresh();
    expect(appendTrail(file, FIELDS, 'r1', AT)).toEqual({ kind: 'refused', newest: undefined });
    expect(existsSync(file) ? lines(file) : []).toEqual([]);
    expect(startTrail(file, 'r1', AT)).toEqual({ kind: 'started', row: 1, at: AT });
    expect(startTrail(file, 'r1', AT)).toEqual({ kind: 'already', row: 1 });
    expect(appendTrail(file, FIELDS, 'r1', AT)).toEqual({ kind: 'appended', row: 2, at: AT });
    expect(startTrail(file, 'r1', AT)).toEqual({ kind: 'already', row: 1 });
    expect(startTrail(file, 'r2', AT)).toEqual({ kind: 'started', row: 3, at: AT });
    expect(appendTrail(file, FIELDS, 'r1', AT)).toEqual({ kind: 'refused', newest: { row: 3, run: 'r2' } });
    // A run that returns joins again with a new start row.
    expect(startTrail(file, 'r1', AT)).toEqual({ kind: 'started', row: 4, at: AT });
    expect(appendTrail(file, FIELDS, 'r1', AT)).toEqual({ kind: 'appended', row: 5, at: AT });
    expect(lines(file)).toHaveLength(6);
    expect(lines(file)[3]).toBe(`${AT}\tr2\tstart\tjoin\tfollows rows 1-2 (runs: r1)\t${file.split('/').pop()}:2-3\tstarted`);
  });

  test('should end a torn last line before appending, keeping it', () => {
    const file = fresh();
    writeFileSync(file, `${TRAIL_HEADER}${AT}\tr1\teng\tha`);
    expect(appendTrail(file, FIELDS, undefined, AT)).toEqual({ kind: 'appended', row: 2, at: AT });
    expect(lines(file).slice(1)).toEqual([`${AT}\tr1\teng\tha`, `${AT}\t-\teng\tkeep\tsimpler\tplan.md:12\tdone`]);
  });

  test.each([
    ['a FIFO', (file: string) => void spawnSync('mkfifo', [file])],
    ['a directory', (file: string) => void spawnSync('mkdir', [file])],
    ['a foreign file', (file: string) => writeFileSync(file, 'name,value\n')],
  ])('should refuse %s at FILE with TRAIL_UNREADABLE and write nothing', (_name, make) => {
    const file = fresh();
    make(file);
    const before = readdirSync(root).sort();
    const content = statSync(file).isFile() ? readFileSync(file, 'utf8') : undefined;
    for (const act of [() => appendTrail(file, FIELDS, undefined, AT), () => startTrail(file, 'r1', AT)]) {
      let code = '';
      try {
        act();
      } catch (error) {
        code = isLanewardError(error) ? error.code : 'NOT_LANEWARD';
      }
      expect(code).toBe('TRAIL_UNREADABLE');
    }
    expect(existsSync(`${file}.lock`)).toBe(false);
    expect(readdirSync(root).sort()).toEqual(before);
    if (content !== undefined) expect(readFileSync(file, 'utf8')).toBe(content);
  });

  test('should take over a lock left by a dead process', () => {
    const file = fresh();
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    writeFileSync(`${file}.lock`, `${dead} 00000000-dead`);
    expect(appendTrail(file, FIELDS, undefined, AT)).toEqual({ kind: 'appended', row: 1, at: AT });
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  test.each([
    ['a token naming this live process with another start tick', (lock: string) => symlinkSync(`${process.pid}:1:abcdef`, lock)],
    [
      "an older writer's file naming this live process, written before it started",
      (lock: string) => {
        writeFileSync(lock, `${process.pid} 00000000-reused`);
        utimesSync(lock, new Date('2000-01-01'), new Date('2000-01-01'));
      },
    ],
  ])('should take over at once a lock whose pid now names another live process: %s', (_, make) => {
    const file = fresh();
    make(`${file}.lock`);
    // kill(pid, 0) succeeds for that pid: only the start time tells the holder is gone.
    expect(canRun(process.pid)).toBe(true);
    const began = Date.now();
    expect(appendTrail(file, FIELDS, undefined, AT)).toEqual({ kind: 'appended', row: 1, at: AT });
    // Taken over, not waited for: a live holder is waited for 10 s and then refused.
    expect(Date.now() - began).toBeLessThan(5_000);
    expect(existsSync(`${file}.lock`)).toBe(false);
    expect(readdirSync(root).filter((name) => name.startsWith(`${basename(file)}.lock`))).toEqual([]);
  });

  test('should refuse the lock while its holder is live (its token names this process and its start tick)', () => {
    const lock = `${fresh()}.lock`;
    const token = `${process.pid}:${processStart(process.pid)!.ticks}:live`;
    symlinkSync(token, lock);
    let refused: unknown;
    try {
      acquireLock(lock, { waitMs: 300, code: 'IO_ERROR' })();
    } catch (error) {
      refused = error;
    }
    expect(isLanewardError(refused) && refused.code).toBe('IO_ERROR');
    expect((refused as Error).message).toContain(`held by live process ${process.pid}`);
    // Left as it was: no takeover was even claimed.
    expect(readlinkSync(lock)).toBe(token);
    expect(readdirSync(root).filter((name) => name.startsWith(`${basename(lock)}.`))).toEqual([]);
  });

  test.each([
    ["an older writer's file", (lock: string) => writeFileSync(lock, `${process.pid} 00000000-live`)],
    ['a token', (lock: string) => symlinkSync(`${process.pid}:${processStart(process.pid)!.ticks}:live`, lock)],
  ])('should wait for a live holder instead of taking its lock: %s', async (_, make) => {
    const file = fresh();
    const lock = `${file}.lock`;
    make(lock);
    const child = spawn(process.execPath, [appender, file, 'w', '1', ''], { stdio: 'ignore' });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    // The waiter reads the lock on every poll: once it has looked twice, it chose to wait.
    await waitingOn(lock, 'the appender');
    // Still held by a live process: nothing may have been written.
    expect(existsSync(file)).toBe(false);
    expect(child.exitCode).toBeNull();
    unlinkSync(lock);
    expect(await exited).toBe(0);
    expect(lines(file)).toHaveLength(2);
  });
});

let appender = '';
beforeAll(() => {
  appender = join(root, 'trail-appender.mjs');
  buildSync({
    entryPoints: [join(ROOT, 'fixtures/trail-appender.ts')],
    outfile: appender,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'silent',
  });
});

describe('concurrent appends', () => {
  test('should keep every row of 20 processes appending 25 rows each, once, on whole lines', async () => {
    const file = fresh();
    expect(startTrail(file, 'r1', AT).kind).toBe('started');
    const writers = Array.from({ length: 20 }, (_, writer) => {
      // Half join as run r1 (the locked start check), half append without a run.
      const child = spawn(process.execPath, [appender, file, String(writer), '25', writer % 2 === 0 ? 'r1' : ''], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      return exitOf(child).then(({ code }) => ({ code, stderr }));
    });
    const results = await Promise.all(writers);
    expect(results.filter((result) => result.code !== 0)).toEqual([]);
    const all = lines(file);
    expect(all[0]).toBe(TRAIL_HEADER.slice(0, -1));
    expect(all).toHaveLength(1 + 1 + 20 * 25);
    const decisions = new Map<string, number>();
    for (const line of all.slice(2)) {
      const cells = line.split('\t');
      expect(cells).toHaveLength(TRAIL_COLUMNS.length);
      expect(cells.slice(2, 3).concat(cells.slice(4))).toEqual(['loop', "'=cmd|x\\ty\\nz", cells[5], "'@ok"]);
      expect(cells[5]).toMatch(/^'-\d+:\d+$/);
      decisions.set(cells[3]!, (decisions.get(cells[3]!) ?? 0) + 1);
    }
    for (let writer = 0; writer < 20; writer++) {
      for (let index = 0; index < 25; index++) expect(decisions.get(`w${writer}-r${index}`)).toBe(1);
    }
    expect(existsSync(`${file}.lock`)).toBe(false);
  });
});
