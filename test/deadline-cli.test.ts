import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { BUNDLE, codesOf, ensureBuilt, laneward, ROOT, type CliResult } from './helpers/cli.ts';
import { canRun, killQuietly, liveGroupMembers, sleep } from './helpers/procs.ts';
import { tempRoot } from './helpers/tmp.ts';
import type { GuardEvent } from '../formats/supervision/receipt.ts';
import { DEADLINE_HELP } from '../main/cli/deadline.ts';

const root = tempRoot('deadline-cli');
beforeAll(ensureBuilt);

// ---------------------------------------------------------------------------------------
// Guard lines, result codes and receipts
// ---------------------------------------------------------------------------------------

const PREFIX = 'QA_DEADLINE ';
/** A `run` guard line as the contract frames it: `\nQA_DEADLINE <json>\n`. */
const FRAME = /\nQA_DEADLINE [^\n]*\n/g;
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

type GuardLine = GuardEvent;

interface ReceiptJson {
  readonly version: number;
  readonly startedAt: string;
  readonly deadlineAt: string;
  readonly budgetMs: number;
  readonly maxProbes?: number;
}

interface ProbeRecord {
  readonly event: string;
  readonly probe: string;
  readonly at: string;
  readonly [extra: string]: unknown;
}

function parseGuard(line: string): GuardLine {
  expect(line.startsWith(PREFIX)).toBe(true);
  const payload = JSON.parse(line.slice(PREFIX.length)) as GuardLine;
  expect(typeof payload.event).toBe('string');
  expect(payload.observedAt).toMatch(ISO_MS);
  expect(typeof payload.remainingMs).toBe('number');
  expect(payload.remainingMs).toBeGreaterThanOrEqual(0);
  expect(typeof payload.expired).toBe('boolean');
  return payload;
}

/** `start`/`status` print exactly one `QA_DEADLINE <json>` line on stdout. */
function stdoutLine(result: CliResult): GuardLine {
  expect(result.stdout.endsWith('\n')).toBe(true);
  const lines = result.stdout.slice(0, -1).split('\n');
  expect(lines).toHaveLength(1);
  return parseGuard(lines[0]!);
}

/**
 * `run`'s guard lines on stderr: every `QA_DEADLINE ` must open a frame of its own
 * (`\nQA_DEADLINE <json>\n`), whatever the child printed before it.
 */
function runLines(stderr: string): GuardLine[] {
  const frames = stderr.match(FRAME) ?? [];
  expect(frames.length).toBe(stderr.split(PREFIX).length - 1);
  return frames.map((frame) => parseGuard(frame.slice(1, -1)));
}

/** What is left of stderr once the guard's frames are removed: the child's own bytes. */
function childStderr(stderr: string): string {
  return stderr.replace(FRAME, '');
}

/** Result codes of the rendered error lines, guard lines aside. */
function codes(stderr: string): string[] {
  return codesOf(
    stderr
      .split('\n')
      .filter((line) => !line.startsWith(PREFIX))
      .join('\n'),
  );
}

function readReceiptJson(file: string): ReceiptJson {
  return JSON.parse(readFileSync(file, 'utf8')) as ReceiptJson;
}

function readLog(file: string): ProbeRecord[] {
  const log = `${file}.log`;
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as ProbeRecord);
}

const iso = (ms: number) => new Date(ms).toISOString();

function validV1(now = Date.now(), budgetMs = 60_000): Record<string, unknown> {
  return { version: 1, startedAt: iso(now), deadlineAt: iso(now + budgetMs), budgetMs };
}

/** A hand-made receipt: content as given, then chmod (0400 unless told). */
function craft(file: string, content: string | Record<string, unknown>, mode = 0o400): string {
  writeFileSync(file, typeof content === 'string' ? content : `${JSON.stringify(content)}\n`);
  chmodSync(file, mode);
  return file;
}

let dirs = 0;
/** A fresh, canonical probe directory under the test root. */
function fresh(name: string): string {
  const dir = join(root, `${name}-${++dirs}`);
  mkdirSync(dir);
  return dir;
}

/** `deadline start` in a fresh directory; the receipt must be published (exit 0). */
function started(name: string, seconds: string, ...extra: string[]): { dir: string; file: string; receipt: ReceiptJson } {
  const dir = fresh(name);
  const file = join(dir, 'deadline.json');
  const result = laneward(['deadline', 'start', file, seconds, ...extra]);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return { dir, file, receipt: readReceiptJson(file) };
}

// ---------------------------------------------------------------------------------------
// Processes: everything the tests start is tracked and must be gone at the end
// ---------------------------------------------------------------------------------------

/** Process groups the guard reported starting (the `started` line's pid leads its group). */
const groups = new Set<number>();
const guards = new Set<ChildProcess>();

/** Polls until `check` holds or `ms` pass; returns whether it held. */
async function within(ms: number, check: () => boolean): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (check()) return true;
    if (Date.now() >= end) return false;
    await sleep(25);
  }
}

function trackStarted(lines: readonly GuardLine[]): void {
  for (const line of lines) if (line.event === 'started' && typeof line['pid'] === 'number') groups.add(line['pid']);
}

/** `deadline run FILE -- argv...` to completion, recording the group it started. */
function guardRun(file: string, argv: readonly string[]): CliResult & { lines: GuardLine[] } {
  const result = laneward(['deadline', 'run', file, '--', ...argv]);
  const lines = runLines(result.stderr);
  trackStarted(lines);
  return { ...result, lines };
}

interface LiveGuard {
  readonly child: ChildProcess;
  stdout: string;
  stderr: string;
  readonly closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts the CLI without waiting (for signals and races). */
function spawnGuard(args: readonly string[]): LiveGuard {
  const child = spawn(process.execPath, [BUNDLE, ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1' },
  });
  guards.add(child);
  const guard: LiveGuard = {
    child,
    stdout: '',
    stderr: '',
    closed: new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal }))),
  };
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (guard.stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (guard.stderr += chunk));
  return guard;
}

/** Waits for a guard to end, killing it (and failing) after `ms`. */
async function closedWithin(guard: LiveGuard, ms: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const timer = setTimeout(() => guard.child.kill('SIGKILL'), ms);
  try {
    const outcome = await guard.closed;
    expect(outcome.signal, `guard did not end within ${ms} ms`).not.toBe('SIGKILL');
    return outcome;
  } finally {
    clearTimeout(timer);
  }
}

// After every test, in any order: each group the guard reported in it is gone, and every
// guard it started has ended. Leftovers are killed, then the test fails.
afterEach(async () => {
  const gone = await within(2_000, () => [...groups].every((pgid) => liveGroupMembers(pgid).length === 0));
  const ended = [...guards].every((guard) => guard.exitCode !== null || guard.signalCode !== null);
  const left = [...groups].filter((pgid) => liveGroupMembers(pgid).length > 0);
  for (const pgid of left) killQuietly(-pgid);
  for (const guard of guards) if (guard.exitCode === null && guard.signalCode === null) guard.kill('SIGKILL');
  groups.clear();
  guards.clear();
  expect(left, 'process groups the guard started still running').toEqual([]);
  expect(gone && ended).toBe(true);
});

afterAll(async () => {
  for (const guard of guards) if (guard.exitCode === null && guard.signalCode === null) guard.kill('SIGKILL');
  for (const pgid of groups) {
    if (liveGroupMembers(pgid).length === 0) continue;
    killQuietly(-pgid);
  }
  await within(2_000, () => [...groups].every((pgid) => liveGroupMembers(pgid).length === 0));
});

// ---------------------------------------------------------------------------------------
// start
// ---------------------------------------------------------------------------------------

describe('laneward deadline start', () => {
  test('should publish a one-line version 1 receipt, read-only with one link, and print its start line', () => {
    const dir = fresh('start');
    const file = join(dir, 'deadline.json');
    const before = Date.now();
    const result = laneward(['deadline', 'start', file, '20']);
    const after = Date.now();
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');

    const text = readFileSync(file, 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    expect(text.slice(0, -1)).not.toContain('\n');
    const receipt = readReceiptJson(file);
    expect(Object.keys(receipt).sort()).toEqual(['budgetMs', 'deadlineAt', 'startedAt', 'version']);
    expect(receipt.version).toBe(1);
    expect(receipt.budgetMs).toBe(20_000);
    expect(receipt.startedAt).toMatch(ISO_MS);
    expect(receipt.deadlineAt).toMatch(ISO_MS);
    expect(Date.parse(receipt.startedAt)).toBeGreaterThanOrEqual(before - 1);
    expect(Date.parse(receipt.startedAt)).toBeLessThanOrEqual(after + 1);
    expect(Date.parse(receipt.deadlineAt) - Date.parse(receipt.startedAt)).toBe(20_000);

    const stat = lstatSync(file);
    expect(stat.isFile()).toBe(true);
    expect(stat.mode & 0o777).toBe(0o400);
    expect(stat.nlink).toBe(1);
    expect(stat.size).toBeLessThanOrEqual(4096);
    // Published under a temp name and linked: nothing but the receipt is left behind.
    expect(readdirSync(dir)).toEqual(['deadline.json']);

    const line = stdoutLine(result);
    expect(line).toMatchObject({ event: 'start', expired: false, deadlineAt: receipt.deadlineAt, startedAt: receipt.startedAt, budgetMs: 20_000 });
    expect(line.remainingMs).toBeGreaterThan(0);
    expect(line.remainingMs).toBeLessThanOrEqual(20_000);
    expect(line).not.toHaveProperty('maxProbes');
  });

  test('should write a version 2 receipt with exactly one more key, maxProbes, under --probes N', () => {
    const { file, receipt } = started('probes', '20', '--probes', '3');
    expect(Object.keys(receipt).sort()).toEqual(['budgetMs', 'deadlineAt', 'maxProbes', 'startedAt', 'version']);
    expect(receipt).toMatchObject({ version: 2, budgetMs: 20_000, maxProbes: 3 });
    expect(lstatSync(file).mode & 0o777).toBe(0o400);
  });

  test('should print the bare start object under --json', () => {
    const dir = fresh('json');
    const file = join(dir, 'deadline.json');
    const result = laneward(['deadline', 'start', file, '20', '--probes', '2', '--json']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const payload = JSON.parse(lines[0]!) as GuardLine;
    const receipt = readReceiptJson(file);
    expect(payload).toMatchObject({ event: 'start', expired: false, deadlineAt: receipt.deadlineAt, budgetMs: 20_000, maxProbes: 2 });
    expect(payload.remainingMs).toBeGreaterThan(0);
  });

  test.each([
    ['1.5', 1500],
    ['60', 60_000],
    ['2147483.647', 2_147_483_647],
  ])('should accept SECONDS %s as budgetMs %i and exit 0', (seconds, budgetMs) => {
    const dir = fresh('seconds');
    const file = join(dir, 'deadline.json');
    const result = laneward(['deadline', 'start', file, seconds]);
    expect(result.code).toBe(0);
    const receipt = readReceiptJson(file);
    expect(receipt.budgetMs).toBe(budgetMs);
    expect(Date.parse(receipt.deadlineAt) - Date.parse(receipt.startedAt)).toBe(budgetMs);
    expect(stdoutLine(result)).toMatchObject({ budgetMs, expired: false });
  });

  test('should accept SECONDS 0.001 as budgetMs 1, a receipt that status then finds expired', () => {
    const dir = fresh('seconds-min');
    const file = join(dir, 'deadline.json');
    const result = laneward(['deadline', 'start', file, '0.001']);
    // Whether 1 ms is over by the time start prints its line is the machine's business:
    // both answers are the contract's; what status says a process start later is not.
    expect([0, 124]).toContain(result.code);
    const receipt = readReceiptJson(file);
    expect(receipt.budgetMs).toBe(1);
    expect(Date.parse(receipt.deadlineAt) - Date.parse(receipt.startedAt)).toBe(1);
    expect(stdoutLine(result).budgetMs).toBe(1);
    const status = laneward(['deadline', 'status', file]);
    expect(status.code).toBe(124);
    expect(stdoutLine(status)).toMatchObject({ event: 'status', expired: true, remainingMs: 0 });
  });

  test.each(['0', '0.000', '1.2345', '-1', '1e3', '2147483.648', '', '.5', '1.', ' 1', '0x10', 'Infinity', 'NaN'])(
    'should refuse SECONDS %j with exit 2 USAGE and write nothing',
    (seconds) => {
      const dir = fresh('bad-seconds');
      const result = laneward(['deadline', 'start', join(dir, 'deadline.json'), seconds]);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(codes(result.stderr)).toEqual(['USAGE']);
      expect(readdirSync(dir)).toEqual([]);
    },
  );

  test.each(['0', '-1', '1.5', 'two', '1000001'])('should refuse --probes %j with exit 2 USAGE and write nothing', (probes) => {
    const dir = fresh('bad-probes');
    const result = laneward(['deadline', 'start', join(dir, 'deadline.json'), '20', '--probes', probes]);
    expect(result.code).toBe(2);
    expect(codes(result.stderr)).toEqual(['USAGE']);
    expect(readdirSync(dir)).toEqual([]);
  });

  test('should clamp deadlineAt to an earlier EARLIER_UTC and keep the requested budgetMs', () => {
    const dir = fresh('earlier');
    const file = join(dir, 'deadline.json');
    const earlier = iso(Date.now() + 30_000);
    const result = laneward(['deadline', 'start', file, '600', earlier]);
    expect(result.code).toBe(0);
    const receipt = readReceiptJson(file);
    expect(receipt).toMatchObject({ version: 1, budgetMs: 600_000, deadlineAt: earlier });
    const line = stdoutLine(result);
    expect(line).toMatchObject({ event: 'start', deadlineAt: earlier, budgetMs: 600_000, expired: false });
    expect(line.remainingMs).toBeLessThanOrEqual(30_000);
    // The clamped receipt is accepted by status: deadlineAt <= startedAt + budgetMs.
    const status = laneward(['deadline', 'status', file]);
    expect(status.code).toBe(0);
    expect(stdoutLine(status)).toMatchObject({ event: 'status', deadlineAt: earlier });
  });

  test('should never move deadlineAt later for an EARLIER_UTC past the budget (canonical form without ms)', () => {
    const dir = fresh('later');
    const file = join(dir, 'deadline.json');
    const result = laneward(['deadline', 'start', file, '20', '2999-01-01T00:00:00Z']);
    expect(result.code).toBe(0);
    const receipt = readReceiptJson(file);
    expect(Date.parse(receipt.deadlineAt) - Date.parse(receipt.startedAt)).toBe(20_000);
    expect(receipt.budgetMs).toBe(20_000);
  });

  test.each([
    '2030-01-01T00:00:00+00:00',
    '2030-01-01',
    '2030-01-01 00:00:00Z',
    '2030-01-01T00:00:00.5Z',
    '2030-01-01T00:00:00.000z',
    '2030-02-30T00:00:00Z',
    '2030-01-01T24:00:00Z',
    '1893456000000',
    'tomorrow',
  ])('should refuse the non-canonical EARLIER_UTC %j with exit 2 USAGE and write nothing', (earlier) => {
    const dir = fresh('bad-earlier');
    const result = laneward(['deadline', 'start', join(dir, 'deadline.json'), '20', earlier]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(codes(result.stderr)).toEqual(['USAGE']);
    expect(readdirSync(dir)).toEqual([]);
  });

  test('should still write the receipt and exit 124 for an EARLIER_UTC already past', () => {
    const dir = fresh('past');
    const file = join(dir, 'deadline.json');
    const result = laneward(['deadline', 'start', file, '20', '2000-01-01T00:00:00Z']);
    expect(result.code).toBe(124);
    expect(result.stderr).toBe('');
    const receipt = readReceiptJson(file);
    expect(receipt).toMatchObject({ version: 1, budgetMs: 20_000, deadlineAt: '2000-01-01T00:00:00.000Z' });
    expect(lstatSync(file).mode & 0o777).toBe(0o400);
    expect(stdoutLine(result)).toMatchObject({ event: 'start', expired: true, remainingMs: 0, deadlineAt: '2000-01-01T00:00:00.000Z' });
    // The receipt is well formed: status reads it and reports it expired.
    const status = laneward(['deadline', 'status', file]);
    expect(status.code).toBe(124);
    expect(stdoutLine(status)).toMatchObject({ event: 'status', expired: true, remainingMs: 0 });
  });

  test.each([
    ['arbitrary bytes, mode 0644', (file: string) => craft(file, 'precious, not a receipt\n', 0o644)],
    ['a receipt of its own', (file: string) => craft(file, validV1())],
    ['a directory', (file: string) => mkdirSync(file)],
  ])('should never replace an existing FILE holding %s (exit 2 RECEIPT_EXISTS)', (_name, make) => {
    const dir = fresh('exists');
    const file = join(dir, 'deadline.json');
    make(file);
    const before = lstatSync(file);
    const bytes = before.isFile() ? readFileSync(file) : null;
    const result = laneward(['deadline', 'start', file, '20']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(codes(result.stderr)).toEqual(['RECEIPT_EXISTS']);
    const after = lstatSync(file);
    if (bytes !== null) expect(readFileSync(file)).toEqual(bytes);
    expect([after.mode, after.ino, after.mtimeMs, after.nlink]).toEqual([before.mode, before.ino, before.mtimeMs, before.nlink]);
    expect(readdirSync(dir)).toEqual(['deadline.json']);
  });

  test.each([
    ['a missing parent directory', (dir: string) => join(dir, 'absent', 'deadline.json')],
    ['a regular file as parent', (dir: string) => (writeFileSync(join(dir, 'plain'), ''), join(dir, 'plain', 'deadline.json'))],
    [
      'a symlinked parent directory',
      (dir: string) => (mkdirSync(join(dir, 'real')), symlinkSync(join(dir, 'real'), join(dir, 'link')), join(dir, 'link', 'deadline.json')),
    ],
    [
      'a symlinked ancestor further up',
      (dir: string) => (
        mkdirSync(join(dir, 'real', 'sub'), { recursive: true }), symlinkSync(join(dir, 'real'), join(dir, 'link')), join(dir, 'link', 'sub', 'deadline.json')
      ),
    ],
    ['a dangling symlink as FILE', (dir: string) => (symlinkSync(join(dir, 'target.json'), join(dir, 'deadline.json')), join(dir, 'deadline.json'))],
  ])('should refuse %s with exit 2 RECEIPT_INVALID and create nothing', (_name, make) => {
    const dir = fresh('bad-path');
    const file = make(dir);
    const before = readdirSync(dir, { recursive: true }).map(String).sort();
    const result = laneward(['deadline', 'start', file, '20']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(codes(result.stderr)).toEqual(['RECEIPT_INVALID']);
    expect(readdirSync(dir, { recursive: true }).map(String).sort()).toEqual(before);
  });
});

// ---------------------------------------------------------------------------------------
// status
// ---------------------------------------------------------------------------------------

describe('laneward deadline status', () => {
  test('should exit 0 with remainingMs > 0 before the deadline and 124 after it, on the actual clock', async () => {
    // Seconds of budget: the status must run before the deadline even when node starts slowly under load.
    const { file, receipt } = started('status', '4');
    const before = laneward(['deadline', 'status', file]);
    expect(before.code).toBe(0);
    expect(before.stderr).toBe('');
    const line = stdoutLine(before);
    expect(line).toMatchObject({ event: 'status', expired: false, deadlineAt: receipt.deadlineAt, probesUsed: 0 });
    expect(line.remainingMs).toBeGreaterThan(0);
    expect(line.remainingMs).toBeLessThanOrEqual(4_000);

    const json = laneward(['deadline', 'status', file, '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout.trim())).toMatchObject({ event: 'status', expired: false, deadlineAt: receipt.deadlineAt });

    await sleep(Math.max(0, Date.parse(receipt.deadlineAt) - Date.now()) + 50);
    const after = laneward(['deadline', 'status', file]);
    expect(after.code).toBe(124);
    expect(stdoutLine(after)).toMatchObject({ event: 'status', expired: true, remainingMs: 0, deadlineAt: receipt.deadlineAt });
    expect(JSON.parse(laneward(['deadline', 'status', file, '--json']).stdout.trim())).toMatchObject({ expired: true, remainingMs: 0 });
    // The receipt itself was not touched by reading it.
    expect(readReceiptJson(file)).toEqual(receipt);
  });

  test.each([
    ['a hand-made version 1 receipt', () => validV1()],
    ['a hand-made version 2 receipt', () => ({ ...validV1(), version: 2, maxProbes: 4 })],
    ['deadlineAt exactly startedAt + budgetMs', () => validV1(Date.now(), 30_000)],
    ['deadlineAt earlier than startedAt + budgetMs', () => ({ ...validV1(Date.now(), 30_000), budgetMs: 90_000 })],
  ])('should accept %s (control for the refusals below)', (_name, make) => {
    const dir = fresh('control');
    const file = craft(join(dir, 'deadline.json'), make());
    const result = laneward(['deadline', 'status', file]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(stdoutLine(result).remainingMs).toBeGreaterThan(0);
  });

  const bad: [string, (dir: string) => string][] = [
    ['a receipt with an extra key', (d) => craft(join(d, 'deadline.json'), { ...validV1(), extra: true })],
    ['a receipt that starts an hour from now', (d) => craft(join(d, 'deadline.json'), validV1(Date.now() + 3_600_000, 1_000))],
    ['a receipt that starts 30 days from now', (d) => craft(join(d, 'deadline.json'), validV1(Date.now() + 30 * 86_400_000, 1_000))],
    ['a version 2 receipt with a key beyond maxProbes', (d) => craft(join(d, 'deadline.json'), { ...validV1(), version: 2, maxProbes: 2, note: 'x' })],
    ['a version 1 receipt carrying maxProbes', (d) => craft(join(d, 'deadline.json'), { ...validV1(), maxProbes: 2 })],
    ['version 2 without maxProbes', (d) => craft(join(d, 'deadline.json'), { ...validV1(), version: 2 })],
    ['version 3', (d) => craft(join(d, 'deadline.json'), { ...validV1(), version: 3 })],
    ['version "1" as a string', (d) => craft(join(d, 'deadline.json'), { ...validV1(), version: '1' })],
    ['a missing key', (d) => craft(join(d, 'deadline.json'), { version: 1, startedAt: iso(Date.now()), budgetMs: 60_000 })],
    [
      'deadlineAt 1 ms later than startedAt + budgetMs',
      (d) => {
        const now = Date.now();
        return craft(join(d, 'deadline.json'), { version: 1, startedAt: iso(now), deadlineAt: iso(now + 30_001), budgetMs: 30_000 });
      },
    ],
    ['a non-canonical time', (d) => craft(join(d, 'deadline.json'), { ...validV1(), startedAt: '2026-01-01T00:00:00+00:00' })],
    ['budgetMs 0', (d) => craft(join(d, 'deadline.json'), { ...validV1(), budgetMs: 0 })],
    ['a writable mode (0600)', (d) => craft(join(d, 'deadline.json'), validV1(), 0o600)],
    ['an other-writable mode (0402)', (d) => craft(join(d, 'deadline.json'), validV1(), 0o402)],
    [
      'two hard links (the original name)',
      (d) => {
        const file = craft(join(d, 'deadline.json'), validV1());
        linkSync(file, join(d, 'second.json'));
        return file;
      },
    ],
    [
      'two hard links (the second name)',
      (d) => {
        linkSync(craft(join(d, 'deadline.json'), validV1()), join(d, 'second.json'));
        return join(d, 'second.json');
      },
    ],
    [
      'a receipt reached through a symlinked directory',
      (d) => {
        mkdirSync(join(d, 'real'));
        craft(join(d, 'real', 'deadline.json'), validV1());
        symlinkSync(join(d, 'real'), join(d, 'link'));
        return join(d, 'link', 'deadline.json');
      },
    ],
    [
      'a symlink file to a valid receipt',
      (d) => {
        craft(join(d, 'real.json'), validV1());
        symlinkSync(join(d, 'real.json'), join(d, 'deadline.json'));
        return join(d, 'deadline.json');
      },
    ],
    ['non-JSON text', (d) => craft(join(d, 'deadline.json'), 'not a receipt\n')],
    ['truncated JSON', (d) => craft(join(d, 'deadline.json'), JSON.stringify(validV1()).slice(0, 30))],
    ['two lines', (d) => craft(join(d, 'deadline.json'), `${JSON.stringify(validV1())}\n${JSON.stringify(validV1())}\n`)],
    ['a JSON array', (d) => craft(join(d, 'deadline.json'), '[1]\n')],
    ['JSON null', (d) => craft(join(d, 'deadline.json'), 'null\n')],
    ['an empty file', (d) => craft(join(d, 'deadline.json'), '')],
    ['a receipt over 4 KiB', (d) => craft(join(d, 'deadline.json'), `${JSON.stringify(validV1())}${' '.repeat(4096)}\n`)],
    ['an absent file', (d) => join(d, 'deadline.json')],
    ['a directory', (d) => (mkdirSync(join(d, 'deadline.json')), join(d, 'deadline.json'))],
    [
      'a FIFO',
      (d) => {
        const file = join(d, 'deadline.json');
        expect(spawnSync('mkfifo', ['-m', '0400', file]).status).toBe(0);
        return file;
      },
    ],
  ];

  test.each(bad)('should refuse %s: status and run exit 2 RECEIPT_INVALID and run starts nothing', (_name, make) => {
    const dir = fresh('refused');
    const file = make(dir);

    const status = laneward(['deadline', 'status', file]);
    expect(status.code).toBe(2);
    expect(status.stdout).toBe('');
    expect(codes(status.stderr)).toEqual(['RECEIPT_INVALID']);

    const marker = join(dir, 'marker');
    const run = guardRun(file, ['bash', '-c', `touch '${marker}'`]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(codes(run.stderr)).toEqual(['RECEIPT_INVALID']);
    // Any guard line is the error line; nothing was started.
    for (const line of run.lines) expect(line).toMatchObject({ event: 'error', code: 'RECEIPT_INVALID' });
    expect(existsSync(marker)).toBe(false);
    expect(readLog(file).filter((record) => record.event === 'finish')).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------
// run
// ---------------------------------------------------------------------------------------

describe('laneward deadline run', () => {
  test("should pass the child's exit status through, leave its output alone and frame started then finished", () => {
    const { file, receipt } = started('run', '20');
    const result = guardRun(file, ['bash', '-c', "printf 'line one\\nno newline'; printf 'err without newline' >&2; exit 3"]);
    expect(result.code).toBe(3);
    expect(result.stdout).toBe('line one\nno newline');
    expect(childStderr(result.stderr)).toBe('err without newline');
    expect(result.lines.map((line) => line.event)).toEqual(['started', 'finished']);
    const [start, finish] = result.lines as [GuardLine, GuardLine];
    expect(start).toMatchObject({ event: 'started', expired: false, deadlineAt: receipt.deadlineAt, probe: 1, argv0: 'bash' });
    expect(typeof start['pid']).toBe('number');
    expect(start.remainingMs).toBeGreaterThan(0);
    expect(finish).toMatchObject({ event: 'finished', expired: false, timedOut: false, exitCode: 3, deadlineAt: receipt.deadlineAt });
    expect(finish.remainingMs).toBeGreaterThan(0);
    expect(finish).not.toHaveProperty('code');
  });

  test('should exit 0 for a child that succeeds', () => {
    const { file } = started('run-ok', '20');
    const result = guardRun(file, ['true']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');
    expect(childStderr(result.stderr)).toBe('');
    expect(result.lines.at(-1)).toMatchObject({ event: 'finished', timedOut: false, exitCode: 0, expired: false });
  });

  test("should tell a child's own 124 from a timeout by event and timedOut", () => {
    const { file } = started('run-124', '20');
    const result = guardRun(file, ['bash', '-c', 'exit 124']);
    expect(result.code).toBe(124);
    expect(result.lines.at(-1)).toMatchObject({ event: 'finished', timedOut: false, exitCode: 124, expired: false });
    expect(result.lines.at(-1)).not.toHaveProperty('code');
  });

  test('should pass argv without a shell: metacharacters arrive literally and run nothing', () => {
    const { dir, file } = started('argv', '20');
    const marker = join(dir, 'marker');
    const args = [`$(touch ${marker}); rm -rf x`, `\`touch ${marker}\``, '*', 'a b', '"quoted"', '$HOME', '', 'back\\slash', 'semi;colon|pipe&amp'];
    const result = guardRun(file, [process.execPath, '-e', 'process.stdout.write(JSON.stringify(process.argv.slice(1)))', ...args]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(args);
    expect(existsSync(marker)).toBe(false);
    expect(readdirSync(dir).sort()).toEqual(['deadline.json', 'deadline.json.log']);
  });

  test.each([
    ['USR1', 138],
    ['KILL', 137],
    ['TERM', 143],
  ])('should exit 128+signal for a child killed by SIG%s', (signal, exitCode) => {
    const { file } = started('signal', '20');
    const result = guardRun(file, ['bash', '-c', `kill -${signal} $$`]);
    expect(result.code).toBe(exitCode);
    expect(result.lines.at(-1)).toMatchObject({ event: 'finished', timedOut: false, exitCode, signal: `SIG${signal}` });
  });

  test('should time out with exit 124 and an expired line, killing the whole group at the deadline', async () => {
    // The probe must be spawned before the receipt runs out, however slowly node starts under load.
    const { dir, file, receipt } = started('timeout', '4');
    const bg = join(dir, 'bg.pid');
    const result = guardRun(file, ['bash', '-c', `sleep 30 & echo $! > '${bg}'; sleep 30`]);
    const returnedAt = Date.now();
    expect(result.code).toBe(124);
    expect(result.stdout).toBe('');
    expect(childStderr(result.stderr)).toBe('');
    expect(result.lines.map((line) => line.event)).toEqual(['started', 'expired']);
    const expired = result.lines[1]!;
    expect(expired).toMatchObject({ event: 'expired', expired: true, timedOut: true, exitCode: 124, code: 'DEADLINE_EXPIRED', remainingMs: 0, deadlineAt: receipt.deadlineAt });
    // Upper bound only: the guard returned within a few seconds of the deadline.
    expect(returnedAt - Date.parse(receipt.deadlineAt)).toBeLessThan(5_000);

    const group = result.lines[0]!['pid'] as number;
    const background = Number(readFileSync(bg, 'utf8'));
    expect(background).toBeGreaterThan(0);
    expect(await within(2_000, () => !canRun(background) && liveGroupMembers(group).length === 0)).toBe(true);

    const finish = readLog(file).filter((record) => record.event === 'finish');
    expect(finish).toHaveLength(1);
    expect(finish[0]).toMatchObject({ exitCode: 124, timedOut: true });
  });

  test('should kill background descendants when the child finishes', async () => {
    const { dir, file } = started('bg-finish', '20');
    const bg = join(dir, 'bg.pid');
    const result = guardRun(file, ['bash', '-c', `sleep 30 & echo $! > '${bg}'; exit 0`]);
    expect(result.code).toBe(0);
    expect(result.lines.at(-1)).toMatchObject({ event: 'finished', timedOut: false, exitCode: 0 });
    const group = result.lines[0]!['pid'] as number;
    const background = Number(readFileSync(bg, 'utf8'));
    expect(background).toBeGreaterThan(0);
    expect(await within(2_000, () => !canRun(background) && liveGroupMembers(group).length === 0)).toBe(true);
  });

  test('should start nothing and exit 124 on a receipt already expired', async () => {
    const dir = fresh('pre-expired');
    const file = join(dir, 'deadline.json');
    expect(laneward(['deadline', 'start', file, '20', iso(Date.now() - 1_000)]).code).toBe(124);
    const marker = join(dir, 'marker');
    const result = guardRun(file, ['bash', '-c', `touch '${marker}'`]);
    expect(result.code).toBe(124);
    expect(result.stdout).toBe('');
    expect(childStderr(result.stderr)).toBe('');
    expect(result.lines).toHaveLength(1);
    expect(result.lines[0]).toMatchObject({ event: 'expired', expired: true, remainingMs: 0, code: 'DEADLINE_EXPIRED', launched: false });
    expect(existsSync(marker)).toBe(false);
    expect(readLog(file).filter((record) => record.event === 'finish')).toEqual([]);
  });

  test('should start nothing once a receipt started live has run out', async () => {
    const { dir, file, receipt } = started('ran-out', '1');
    await sleep(Math.max(0, Date.parse(receipt.deadlineAt) - Date.now()) + 50);
    const marker = join(dir, 'marker');
    const result = guardRun(file, ['bash', '-c', `touch '${marker}'`]);
    expect(result.code).toBe(124);
    expect(result.lines).toEqual([expect.objectContaining({ event: 'expired', code: 'DEADLINE_EXPIRED', launched: false })]);
    expect(existsSync(marker)).toBe(false);
  });

  test('should refuse the launch after --probes N with exit 124 PROBE_BUDGET_EXHAUSTED and start nothing', () => {
    const { dir, file } = started('probe-budget', '20', '--probes', '2');
    for (const probe of [1, 2]) {
      const result = guardRun(file, ['true']);
      expect(result.code).toBe(0);
      expect(result.lines[0]).toMatchObject({ event: 'started', probe });
    }
    const marker = join(dir, 'marker');
    const third = guardRun(file, ['bash', '-c', `touch '${marker}'`]);
    expect(third.code).toBe(124);
    expect(third.stdout).toBe('');
    expect(third.lines).toHaveLength(1);
    expect(third.lines[0]).toMatchObject({ event: 'expired', code: 'PROBE_BUDGET_EXHAUSTED', launched: false, expired: false });
    expect(existsSync(marker)).toBe(false);

    const status = laneward(['deadline', 'status', file]);
    expect(status.code).toBe(0);
    expect(stdoutLine(status)).toMatchObject({ event: 'status', maxProbes: 2, probesUsed: 2 });
    expect(readLog(file).filter((record) => record.event === 'finish')).toHaveLength(2);
  });

  test('should grant exactly N of several guards racing for the probe budget', async () => {
    const { dir, file } = started('probe-race', '20', '--probes', '2');
    const counter = join(dir, 'counter');
    const racers = [1, 2, 3, 4].map(() => spawnGuard(['deadline', 'run', file, '--', 'bash', '-c', `echo x >> '${counter}'`]));
    const outcomes = await Promise.all(racers.map((guard) => closedWithin(guard, 20_000)));
    for (const guard of racers) trackStarted(runLines(guard.stderr));
    expect(outcomes.map((outcome) => outcome.code).sort()).toEqual([0, 0, 124, 124]);
    const refused = racers.filter((_, i) => outcomes[i]!.code === 124).map((guard) => runLines(guard.stderr));
    for (const lines of refused) expect(lines).toEqual([expect.objectContaining({ event: 'expired', code: 'PROBE_BUDGET_EXHAUSTED', launched: false })]);
    expect(readFileSync(counter, 'utf8')).toBe('x\nx\n');
  });

  test.each([
    ['a path that does not exist', (dir: string) => join(dir, 'no-such-command')],
    ['a bare name not on PATH', () => `laneward-no-such-command-${process.pid}`],
  ])('should exit 127 COMMAND_NOT_FOUND for %s', (_name, command) => {
    const { dir, file } = started('not-found', '20');
    const result = guardRun(file, [command(dir), 'arg']);
    expect(result.code).toBe(127);
    expect(result.stdout).toBe('');
    expect(result.lines.map((line) => line.event)).toEqual(['error']);
    expect(result.lines[0]).toMatchObject({ event: 'error', code: 'COMMAND_NOT_FOUND', exitCode: 127 });
    expect(readLog(file).filter((record) => record.event === 'finish')).toEqual([expect.objectContaining({ exitCode: 127 })]);
  });

  test.each([
    ['a file without execute permission', (dir: string, marker: string) => craft(join(dir, 'script.sh'), `#!/bin/sh\ntouch '${marker}'\n`, 0o644)],
    ['a directory', (dir: string) => (mkdirSync(join(dir, 'subdir')), join(dir, 'subdir'))],
  ])('should exit 126 COMMAND_NOT_EXECUTABLE for %s', (_name, make) => {
    const { dir, file } = started('not-exec', '20');
    const marker = join(dir, 'marker');
    const result = guardRun(file, [make(dir, marker)]);
    expect(result.code).toBe(126);
    expect(result.lines.map((line) => line.event)).toEqual(['error']);
    expect(result.lines[0]).toMatchObject({ event: 'error', code: 'COMMAND_NOT_EXECUTABLE', exitCode: 126 });
    expect(existsSync(marker)).toBe(false);
  });

  test('should append a launch and a finish record per probe to FILE.log', () => {
    const { file } = started('log', '20');
    const runs = [guardRun(file, ['true']), guardRun(file, ['bash', '-c', 'exit 5'])];
    expect(runs.map((result) => result.code)).toEqual([0, 5]);
    const records = readLog(file);
    expect(records.map((record) => record.event)).toEqual(['launch', 'finish', 'launch', 'finish']);
    for (const record of records) {
      expect(typeof record.probe).toBe('string');
      expect(record.at).toMatch(ISO_MS);
    }
    const [launch1, finish1, launch2, finish2] = records as [ProbeRecord, ProbeRecord, ProbeRecord, ProbeRecord];
    expect(finish1.probe).toBe(launch1.probe);
    expect(finish2.probe).toBe(launch2.probe);
    expect(launch2.probe).not.toBe(launch1.probe);
    expect(finish1).toMatchObject({ exitCode: 0, timedOut: false });
    expect(finish2).toMatchObject({ exitCode: 5, timedOut: false });
    expect(Date.parse(finish1.at)).toBeGreaterThanOrEqual(Date.parse(launch1.at));
    expect(Date.parse(launch2.at)).toBeGreaterThanOrEqual(Date.parse(finish1.at));
    const status = laneward(['deadline', 'status', file]);
    expect(stdoutLine(status)).toMatchObject({ probesUsed: 2 });
    expect(stdoutLine(status)).not.toHaveProperty('maxProbes');
  });

  test.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const)('should exit %s -> %i when the guard itself is interrupted, killing the child group', async (signal, exitCode) => {
    const { dir, file } = started('interrupt', '20');
    const bg = join(dir, 'bg.pid');
    const guard = spawnGuard(['deadline', 'run', file, '--', 'bash', '-c', `sleep 30 & echo $! > '${bg}'; sleep 30`]);
    try {
      const ready = await within(10_000, () => guard.stderr.includes('"event":"started"') && existsSync(bg) && readFileSync(bg, 'utf8').endsWith('\n'));
      expect(ready).toBe(true);
      const startedLine = runLines(guard.stderr)[0]!;
      trackStarted([startedLine]);
      const group = startedLine['pid'] as number;
      const background = Number(readFileSync(bg, 'utf8'));
      expect(canRun(background)).toBe(true);
      expect(liveGroupMembers(group).length).toBeGreaterThan(0);

      guard.child.kill(signal);
      const outcome = await closedWithin(guard, 10_000);
      expect(outcome).toEqual({ code: exitCode, signal: null });
      const lines = runLines(guard.stderr);
      expect(lines.map((line) => line.event)).toEqual(['started', 'finished']);
      expect(lines[1]).toMatchObject({ event: 'finished', cancelled: true, code: 'CANCELLED', exitCode, timedOut: false });
      expect(await within(2_000, () => !canRun(background) && liveGroupMembers(group).length === 0)).toBe(true);
    } finally {
      if (guard.child.exitCode === null && guard.child.signalCode === null) guard.child.kill('SIGKILL');
    }
  });
});

// ---------------------------------------------------------------------------------------
// usage
// ---------------------------------------------------------------------------------------

describe('laneward deadline usage', () => {
  const usageDir = join(root, 'usage');
  const file = join(usageDir, 'deadline.json');
  const marker = join(usageDir, 'marker');
  beforeAll(() => {
    mkdirSync(usageDir);
    craft(file, validV1(Date.now(), 600_000));
  });

  test.each([
    [[]],
    [['frobnicate']],
    [['run', file, 'bash', '-c', `touch '${marker}'`]],
    [['run', file]],
    [['run', file, '--']],
    [['run', '--', 'bash', '-c', `touch '${marker}'`]],
    [['run', file, 'extra', '--', 'bash', '-c', `touch '${marker}'`]],
    [['run', file, '--bogus', '--', 'bash', '-c', `touch '${marker}'`]],
    [['start']],
    [['start', join(usageDir, 'other.json')]],
    [['start', join(usageDir, 'other.json'), '20', '2030-01-01T00:00:00Z', 'extra']],
    [['start', join(usageDir, 'other.json'), '20', '--bogus']],
    [['status']],
    [['status', file, file]],
    [['status', file, '--bogus']],
  ])('should refuse deadline %j with exit 2 and a USAGE line, starting nothing', (args) => {
    const result = laneward(['deadline', ...args]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(codes(result.stderr)).toEqual(['USAGE']);
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(`${file}.log`)).toBe(false);
    expect(existsSync(join(usageDir, 'other.json'))).toBe(false);
  });

  test.each([[['--help']], [['-h']], [['start', '--help']], [['status', '--help']], [['run', '--help']]])('should print help for deadline %j and exit 0', (args) => {
    const result = laneward(['deadline', ...args]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(`${DEADLINE_HELP}\n`);
    // The help states what the guard cannot do: a setsid descendant leaves its reach.
    expect(result.stdout).toMatch(/\bsetsid\b/);
  });
});


