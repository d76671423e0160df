import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { signedActions, type SignedActions } from './helpers/actions.ts';
import { BUNDLE, codesOf, ensureBuilt, laneward, ROOT } from './helpers/cli.ts';
import { canRun, exitOf, killQuietly, pidsIn, settleTagged } from './helpers/procs.ts';
import { tempRoot } from './helpers/tmp.ts';

// Defects found by trying supervision as a hostile user would. Each case runs real
// processes and failed before its fix; time is only bounded generously from above.

const root = tempRoot('defects');
const NODE = process.execPath;
const HAS_GCC = spawnSync('gcc', ['--version']).status === 0;
const STUBBORN = join(root, 'stubborn');
const QA = 'QA_DEADLINE ';

// Every process this file starts inherits this variable, so a leak is found by identity.
const TAG = `LANEWARD_DEFECTS_TEST=${process.pid}-${Date.now()}`;
process.env.LANEWARD_DEFECTS_TEST = TAG.slice(TAG.indexOf('=') + 1);

let actions: SignedActions;
let counter = 0;
const dir = (name: string) => {
  const path = join(root, `${counter++}-${name}`);
  mkdirSync(path);
  return path;
};
/** Pids a test must see dead at its end (a zombie leader's threads hide its environment). */
const survivors = new Set<number>();

beforeAll(() => {
  ensureBuilt();
  actions = signedActions(root, {
    total: { timeout_mode: 'total_deadline', cleanup_reserve_ms: 0, post_provider_ms: 2000 },
  });
  if (HAS_GCC) {
    const built = spawnSync('gcc', ['-O2', '-pthread', '-o', STUBBORN, join(ROOT, 'fixtures/providers/stubborn.c')], { encoding: 'utf8' });
    if (built.status !== 0) throw new Error(`gcc failed: ${built.stderr}`);
  }
});

afterEach(async () => {
  const left = [...survivors].filter(canRun);
  for (const pid of survivors) killQuietly(pid);
  survivors.clear();
  const leaked = await settleTagged(TAG, 3_000);
  for (const pid of leaked) killQuietly(pid);
  expect(left, 'survivors still running').toEqual([]);
  expect(leaked, 'processes of this test still running').toEqual([]);
});

const lease = (timeoutMs: number, argv: string[], options: string[] = [], descriptor = actions.file, trust = actions.trust) => [
  'lease', 'run', '--json', '--actions', descriptor, '--trust', trust, '--action', 'total', '--timeout-ms', String(timeoutMs), ...options, '--', ...argv,
];

/** The `run` guard lines on stderr, parsed. */
const guardLines = (stderr: string) =>
  stderr
    .split('\n')
    .filter((line) => line.startsWith(QA))
    .map((line) => JSON.parse(line.slice(QA.length)) as Record<string, unknown>);

// Bash waits until the fixture's main thread has exited (state Z) before going on, so the
// supervisor only ever sees the zombie-with-a-running-thread.
const UNTIL_ZOMBIE = 'until grep -q "^State:[[:space:]]*Z" /proc/$p/status 2>/dev/null; do sleep 0.02; done';

describe.skipIf(!HAS_GCC)('defect 1: a process whose main thread exited still runs', () => {
  test('a lease does not report cleanupConfirmed while it runs: it gets the grace, then SIGKILL, and is gone', async () => {
    const work = dir('thread-lease');
    const pidfile = join(work, 'survivor.pid');
    // The survivor's stdio is not the test's pipes: a survivor must fail the test, not hang it.
    const script = `"$0" thread-survivor "$1" </dev/null >/dev/null 2>&1 & p=$!; ${UNTIL_ZOMBIE}; exit 0`;
    const result = laneward(lease(20_000, ['bash', '-c', script, STUBBORN, pidfile]));
    const [survivor] = pidsIn(pidfile);
    survivors.add(survivor!);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'ok', code: null, exitCode: 0, cleanupConfirmed: true });
    // Proven gone means gone: no thread of it may run once laneward has returned.
    expect(canRun(survivor!)).toBe(false);
  });

  test('the guard kills it at the deadline when it sits in a process group of its own', async () => {
    const work = dir('thread-guard');
    const receipt = join(work, 'deadline.json');
    const pidfile = join(work, 'survivor.pid');
    expect(laneward(['deadline', 'start', receipt, '3']).code).toBe(0);
    const script = `set -m; "$0" thread-survivor "$1" </dev/null >/dev/null 2>&1 & p=$!; ${UNTIL_ZOMBIE}; sleep 30`;
    const result = laneward(['deadline', 'run', receipt, '--', 'bash', '-c', script, STUBBORN, pidfile]);
    const [survivor] = pidsIn(pidfile);
    survivors.add(survivor!);
    expect(result.code).toBe(124);
    expect(guardLines(result.stderr).at(-1)).toMatchObject({ event: 'expired', code: 'DEADLINE_EXPIRED', cleanupConfirmed: true });
    expect(canRun(survivor!)).toBe(false);
  });
});

const NS_LAST_PID = '/proc/sys/kernel/ns_last_pid';
const CAN_STEER_PIDS = (() => {
  try {
    closeSync(openSync(NS_LAST_PID, 'r+'));
    return true;
  } catch {
    return false;
  }
})();

describe.skipIf(!CAN_STEER_PIDS)('defect 2: a reused pid hides a survivor', () => {
  test('a member that got the pid of a process the census saw before is still found, signalled and waited for', async () => {
    const work = dir('reuse');
    // The provider ignores SIGTERM. A decoy in its own session is alive when the deadline
    // passes (the census sees it: not ours); then the provider kills it and forks a
    // TERM-ignoring member onto the very same pid (ns_last_pid), and exits.
    const script = [
      'trap "" TERM',
      'setsid sleep 30 </dev/null >/dev/null 2>&1 & d=$!',
      'echo $d > "$0/decoy.pid"',
      'sleep 1.5',
      'kill -9 $d; wait $d 2>/dev/null',
      `echo $((d - 1)) > ${NS_LAST_PID}`,
      'sleep 60 </dev/null >/dev/null 2>&1 & echo $! > "$0/reused.pid"',
      'exit 0',
    ].join('\n');
    // The SIGKILL comes only after a 4 s grace: a proof that passes before it is a lie.
    const result = laneward(lease(600, ['bash', '-c', script, work], ['--grace-ms', '4000', '--teardown-ms', '10000']));
    const [decoy] = pidsIn(join(work, 'decoy.pid'));
    const [reused] = pidsIn(join(work, 'reused.pid'));
    survivors.add(decoy!);
    survivors.add(reused!);
    expect(reused).toBe(decoy);
    expect(result.code).toBe(124);
    const outcome = JSON.parse(result.stdout);
    expect(outcome).toMatchObject({ status: 'timeout', code: 'DEADLINE_EXPIRED', cleanupConfirmed: true });
    expect(outcome.goneMs).toBeGreaterThanOrEqual(3_500);
    expect(canRun(reused!)).toBe(false);
  });
});

describe.skipIf(!HAS_GCC)('defect 3: five seconds to flush, then exit 2, whatever the reader does', () => {
  test('a stderr FIFO nobody drains, switched to blocking by the probe: the guard exits 2', async () => {
    const work = dir('flush');
    const receipt = join(work, 'deadline.json');
    expect(laneward(['deadline', 'start', receipt, '3']).code).toBe(0);
    const fifo = join(work, 'stderr.fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    // Held open read-write: a reader exists (no EPIPE), and it never reads.
    const held = openSync(fifo, 'r+');
    try {
      const guard = spawn(NODE, [BUNDLE, 'deadline', 'run', receipt, '--', STUBBORN, 'block-stderr', '1000000'], { stdio: ['ignore', 'ignore', held] });
      const closed = exitOf(guard);
      // The deadline (1 s) plus the five-second flush, with room for a busy machine.
      const timer = setTimeout(() => guard.kill('SIGKILL'), 30_000);
      const outcome = await closed;
      clearTimeout(timer);
      expect(outcome).toEqual({ code: 2, signal: null });
    } finally {
      closeSync(held);
    }
  });
});

describe('guard lines and a probe sharing stderr as a regular file', () => {
  test('neither overwrites the other: every line arrives whole, finished last', () => {
    const work = dir('file-stderr');
    const receipt = join(work, 'deadline.json');
    expect(laneward(['deadline', 'start', receipt, '30']).code).toBe(0);
    const log = join(work, 'stderr.log');
    const child = spawnSync('bash', ['-c', 'exec "$@" 2>"$0"', log, NODE, BUNDLE, 'deadline', 'run', receipt, '--', 'bash', '-c', 'echo one >&2; echo two >&2'], { encoding: 'utf8', timeout: 20_000 });
    expect(child.status).toBe(0);
    const lines = readFileSync(log, 'utf8').split('\n').filter((line) => line !== '');
    // The started line races the probe's first write (it needs the pid): only its presence
    // is certain; the probe's lines keep their order and the finished line comes last.
    const seen = lines.map((line) => (line.startsWith(QA) ? JSON.parse(line.slice(QA.length)).event : line));
    expect([...seen].sort()).toEqual(['finished', 'one', 'started', 'two']);
    expect(seen.filter((line) => line === 'one' || line === 'two')).toEqual(['one', 'two']);
    expect(seen.at(-1)).toBe('finished');
  });
});

describe('defect 4: every input file goes through one bounded reader', () => {
  test.each([
    ['a FIFO', (work: string) => {
      const fifo = join(work, 'trust.fifo');
      expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
      return fifo;
    }],
    ['/dev/zero', () => '/dev/zero'],
  ])('a trust key that is %s is refused at once: TRUST_KEY_UNUSABLE, exit 3, nothing started', (_name, make) => {
    const work = dir('trust');
    const marker = join(work, 'ran');
    const child = spawnSync(NODE, [BUNDLE, ...lease(5_000, ['touch', marker], [], actions.file, make(work))], { encoding: 'utf8', timeout: 20_000 });
    expect(child.signal).toBeNull();
    expect(child.status).toBe(3);
    expect(JSON.parse(child.stdout)).toMatchObject({ status: 'refused', code: 'TRUST_KEY_UNUSABLE', attempts: 0 });
    expect(codesOf(child.stderr)).toEqual(['TRUST_KEY_UNUSABLE']);
    expect(existsSync(marker)).toBe(false);
  });
});

describe('defect 5: the probe budget fails closed', () => {
  test('a torn last line in FILE.log swallows no launch: --probes 1 grants exactly one run', () => {
    const work = dir('torn');
    const receipt = join(work, 'deadline.json');
    expect(laneward(['deadline', 'start', receipt, '30', '--probes', '1']).code).toBe(0);
    // A guard killed in the middle of its launch record.
    appendFileSync(`${receipt}.log`, '{"event":"launch","pro');
    const counter = join(work, 'counter');
    const first = laneward(['deadline', 'run', receipt, '--', 'bash', '-c', `echo x >> '${counter}'`]);
    const second = laneward(['deadline', 'run', receipt, '--', 'bash', '-c', `echo x >> '${counter}'`]);
    expect([first.code, second.code]).toEqual([0, 124]);
    expect(guardLines(second.stderr)).toEqual([expect.objectContaining({ event: 'expired', code: 'PROBE_BUDGET_EXHAUSTED', launched: false })]);
    expect(readFileSync(counter, 'utf8')).toBe('x\n');
    const status = laneward(['deadline', 'status', receipt, '--json']);
    expect(JSON.parse(status.stdout)).toMatchObject({ probesUsed: 1, maxProbes: 1 });
  });

  test('a FIFO as FILE.log: run refuses with exit 124 PROBE_LOG_INVALID and status exits 124, neither hangs', () => {
    const work = dir('fifo-log');
    const receipt = join(work, 'deadline.json');
    expect(laneward(['deadline', 'start', receipt, '30', '--probes', '3']).code).toBe(0);
    expect(spawnSync('mkfifo', [`${receipt}.log`]).status).toBe(0);
    const marker = join(work, 'ran');
    // A reader on the FIFO, so an open for writing would not fail on its own.
    const held = openSync(`${receipt}.log`, 'r+');
    try {
      const run = spawnSync(NODE, [BUNDLE, 'deadline', 'run', receipt, '--', 'touch', marker], { encoding: 'utf8', timeout: 20_000 });
      expect(run.signal).toBeNull();
      expect(run.status).toBe(124);
      expect(guardLines(run.stderr)).toEqual([expect.objectContaining({ event: 'expired', code: 'PROBE_LOG_INVALID', launched: false })]);
      expect(existsSync(marker)).toBe(false);
      const status = spawnSync(NODE, [BUNDLE, 'deadline', 'status', receipt], { encoding: 'utf8', timeout: 20_000 });
      expect(status.signal).toBeNull();
      expect(status.status).toBe(124);
      expect(codesOf(status.stderr)).toEqual(['PROBE_LOG_INVALID']);
    } finally {
      closeSync(held);
    }
  });
});

describe('defect 6: one outcome shape, refusal included', () => {
  test('a refused lease has every field of a finished one, null where it does not apply', () => {
    const finished = JSON.parse(laneward(lease(5_000, ['true'])).stdout) as Record<string, unknown>;
    const unsigned = join(dir('unsigned'), 'actions.json');
    writeFileSync(unsigned, readFileSync(actions.file));
    const refusal = laneward(lease(5_000, ['true'], [], unsigned));
    expect(refusal.code).toBe(3);
    const refused = JSON.parse(refusal.stdout) as Record<string, unknown>;
    expect(Object.keys(refused).sort()).toEqual(Object.keys(finished).sort());
    expect(refused).toMatchObject({ status: 'refused', code: 'DESCRIPTOR_INVALID', exitCode: 3, action: 'total', timeoutMode: null, descriptorSha256: null, attempts: 0 });
    expect(finished).toMatchObject({ status: 'ok', action: 'total', timeoutMode: 'total_deadline' });
    expect(finished['descriptorSha256']).toMatch(/^[0-9a-f]{64}$/);
  });

  test('lease fleet --json with a bad descriptor prints its refused outcome', () => {
    const unsigned = join(dir('fleet-unsigned'), 'actions.json');
    writeFileSync(unsigned, readFileSync(actions.file));
    const result = laneward(['lease', 'fleet', '--count', '3', '--json', '--actions', unsigned, '--trust', actions.trust, '--action', 'total', '--timeout-ms', '5000', '--', 'true']);
    expect(result.code).toBe(3);
    const lines = result.stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(lines).toEqual([expect.objectContaining({ status: 'refused', code: 'DESCRIPTOR_INVALID', exitCode: 3, attempts: 0, timeoutMode: null })]);
    expect(codesOf(result.stderr)).toEqual(['DESCRIPTOR_INVALID']);
  });
});

describe('defect 7: an edited receipt cannot extend a deadline', () => {
  const iso = (ms: number) => new Date(ms).toISOString();

  test('budgetMs and deadlineAt rewritten together (startedAt kept): refused, nothing started', () => {
    const work = dir('edited');
    const receipt = join(work, 'deadline.json');
    const now = Date.now();
    // What root makes of a receipt started a minute ago with a 10 s budget.
    writeFileSync(receipt, `${JSON.stringify({ version: 1, startedAt: iso(now - 60_000), deadlineAt: iso(now + 60_000), budgetMs: 120_000 })}\n`);
    chmodSync(receipt, 0o400);
    const status = laneward(['deadline', 'status', receipt]);
    expect(status.code).toBe(2);
    expect(codesOf(status.stderr)).toEqual(['RECEIPT_INVALID']);
    const marker = join(work, 'ran');
    const run = laneward(['deadline', 'run', receipt, '--', 'touch', marker]);
    expect(run.code).toBe(2);
    expect(existsSync(marker)).toBe(false);
  });

  test('a receipt replaced after its first launch (same bytes, another file): refused', () => {
    const work = dir('replaced');
    const receipt = join(work, 'deadline.json');
    expect(laneward(['deadline', 'start', receipt, '30']).code).toBe(0);
    expect(laneward(['deadline', 'run', receipt, '--', 'true']).code).toBe(0);
    const bytes = readFileSync(receipt);
    rmSync(receipt);
    writeFileSync(receipt, bytes);
    chmodSync(receipt, 0o400);
    const marker = join(work, 'ran');
    const run = laneward(['deadline', 'run', receipt, '--', 'touch', marker]);
    expect(run.code).toBe(2);
    expect(guardLines(run.stderr)).toEqual([expect.objectContaining({ event: 'error', code: 'RECEIPT_INVALID' })]);
    expect(existsSync(marker)).toBe(false);
    expect(codesOf(laneward(['deadline', 'status', receipt]).stderr)).toEqual(['RECEIPT_INVALID']);
  });
});

describe('defect 8: a guard with stderr closed has nowhere to put its evidence', () => {
  test('run with 2>&- exits 2 and starts nothing', () => {
    const work = dir('closed');
    const receipt = join(work, 'deadline.json');
    expect(laneward(['deadline', 'start', receipt, '30']).code).toBe(0);
    const marker = join(work, 'ran');
    const child = spawnSync('bash', ['-c', 'exec "$@" 2>&-', 'bash', NODE, BUNDLE, 'deadline', 'run', receipt, '--', 'touch', marker], { encoding: 'utf8', timeout: 20_000 });
    expect(child.status).toBe(2);
    expect(existsSync(marker)).toBe(false);
  });

  test('a stderr reader that goes away: the guard exits 2 and its probe is gone', async () => {
    const work = dir('epipe');
    const receipt = join(work, 'deadline.json');
    expect(laneward(['deadline', 'start', receipt, '3']).code).toBe(0);
    const pidfile = join(work, 'probe.pid');
    const guard = spawn(NODE, [BUNDLE, 'deadline', 'run', receipt, '--', 'bash', '-c', `echo $$ > "$0"; exec sleep 30`, pidfile], { stdio: ['ignore', 'ignore', 'pipe'] });
    // The reader closes its end as soon as the started line arrives.
    guard.stderr!.once('data', () => guard.stderr!.destroy());
    const timer = setTimeout(() => guard.kill('SIGKILL'), 30_000);
    const outcome = await exitOf(guard);
    clearTimeout(timer);
    const [probe] = pidsIn(pidfile);
    survivors.add(probe!);
    expect(outcome).toEqual({ code: 2, signal: null });
    expect(canRun(probe!)).toBe(false);
  });

  test('run with stderr sent to /dev/null on purpose still runs (the control)', () => {
    const work = dir('devnull');
    const receipt = join(work, 'deadline.json');
    expect(laneward(['deadline', 'start', receipt, '30']).code).toBe(0);
    const marker = join(work, 'ran');
    const child = spawnSync('bash', ['-c', 'exec "$@" 2>/dev/null', 'bash', NODE, BUNDLE, 'deadline', 'run', receipt, '--', 'touch', marker], { encoding: 'utf8', timeout: 20_000 });
    expect(child.status).toBe(0);
    expect(existsSync(marker)).toBe(true);
  });
});
