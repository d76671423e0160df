import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { signedActions } from './helpers/actions.ts';
import { BUNDLE, codesOf, ensureBuilt, laneward, ROOT, type CliResult } from './helpers/cli.ts';
import { canRun, killQuietly, liveGroupMembers, pidsIn, settleTagged, until } from './helpers/procs.ts';
import { tempRoot } from './helpers/tmp.ts';

// `laneward lease run` end to end: the built CLI, a signed descriptor, real provider
// processes (fixtures/providers). Time is only ever bounded generously from above, or
// from below where the provider's own schedule makes the bound a certainty.

const root = tempRoot('lease-cli');
const NODE = process.execPath;
const PROVIDER = join(ROOT, 'fixtures/providers/provider.mjs');
const ORPHAN = join(ROOT, 'fixtures/providers/lease-orphan.mjs');
const HAS_PERL = spawnSync('perl', ['-e', '1']).status === 0;

// Every process this file starts inherits this variable (the CLI, its provider, their
// descendants), so a leak is found by identity, never by a guessed pid.
const TAG = `LANEWARD_LEASE_CLI_TEST=${process.pid}-${Date.now()}`;
process.env.LANEWARD_LEASE_CLI_TEST = TAG.slice(TAG.indexOf('=') + 1);

const TRACKERS = ['step-lifecycle', 'claude-stream-json', 'codex-json', 'jsonl-counter'] as const;
const lease = (source: string) => ({ timeout_mode: 'admitted_progress_inactivity', progress: source, cleanup_reserve_ms: 50, post_provider_ms: 3000 });
const ACTIONS = {
  fd: lease('fd'),
  ...Object.fromEntries(TRACKERS.map((kind) => [kind, lease(kind)])),
  total: { timeout_mode: 'total_deadline', cleanup_reserve_ms: 50, post_provider_ms: 3000 },
  'short-post': { ...lease('fd'), post_provider_ms: 300 },
};

let keys = { key: '', pub: '' };
let actions = '';
let counter = 0;
const file = (name: string) => join(root, `${counter++}-${name}`);

beforeAll(() => {
  ensureBuilt();
  const signed = signedActions(root, ACTIONS);
  keys = { key: signed.key, pub: signed.trust };
  actions = signed.file;
});

afterEach(async () => {
  // Nothing a test started may outlive it: wait for stragglers, then kill and fail.
  const leaked = await settleTagged(TAG, 3_000);
  for (const pid of leaked) killQuietly(pid);
  expect(leaked, 'processes of this test still running').toEqual([]);
});

// ---------------------------------------------------------------------------------------
// Helpers

interface Outcome {
  status: string;
  code: string | null;
  exitCode: number;
  childExitCode: number | null;
  signal: string | null;
  providerStarted: boolean;
  attempts: number;
  marks: number;
  durationMs: number;
  cleanupConfirmed: boolean;
  timedOut: boolean;
  leaseExpired: boolean;
  cancelled: boolean;
  goneMs: number | null;
  action: string;
  timeoutMode?: string;
}

const provider = (mode: string, ...args: (string | number)[]) => [NODE, PROVIDER, mode, ...args.map(String)];
/** Runs argv through bash, which appends its pid (the provider's, after exec) to `pidfile`. */
const counted = (pidfile: string, argv: string[]) => ['bash', '-c', 'echo $$ >> "$0"; exec "$@"', pidfile, ...argv];

function leaseArgs(action: string, timeoutMs: number, options: string[] = [], descriptor = actions, trust = keys.pub): string[] {
  return ['lease', 'run', '--actions', descriptor, '--trust', trust, '--action', action, '--timeout-ms', String(timeoutMs), ...options];
}

function run(action: string, timeoutMs: number, argv: string[], options: string[] = []): CliResult & { outcome: Outcome } {
  const result = laneward([...leaseArgs(action, timeoutMs, ['--json', ...options]), '--', ...argv]);
  // --json: exactly one outcome object on stdout; the child's stdout went to stderr.
  expect(result.stdout.endsWith('\n') && result.stdout.indexOf('\n') === result.stdout.length - 1, result.stdout).toBe(true);
  return { ...result, outcome: JSON.parse(result.stdout) as Outcome };
}

/** The rendered issue codes on stderr, without the child's own output lines. */
const issueCodes = (stderr: string) => codesOf(stderr).filter((code) => !code.startsWith('UNRENDERED'));

/** Resolves once `pid` has exited (gone, or a zombie waiting for its reaper). */
const goneOrZombie = (pid: number, ms = 3_000) => until(() => !canRun(pid), ms, `pid ${pid} to exit`);

// ---------------------------------------------------------------------------------------

describe('laneward lease run: admitted progress renews the lease', () => {
  // Leases of 1.5 s: a node provider must start and mark within the first one, which a
  // busy two-core machine does not always do in a few hundred ms.
  test('a child marking every 100 ms x30 outlives a 1.5 s lease with exactly one spawn: ok, exit 0', () => {
    const pidfile = file('one-spawn.pid');
    const { code, stderr, outcome } = run('fd', 1_500, counted(pidfile, provider('marks', 100, 30)));
    expect(code).toBe(0);
    expect(outcome).toMatchObject({
      status: 'ok',
      code: null,
      exitCode: 0,
      childExitCode: 0,
      providerStarted: true,
      attempts: 1,
      marks: 30,
      cleanupConfirmed: true,
      leaseExpired: false,
      timedOut: false,
      cancelled: false,
      action: 'fd',
      timeoutMode: 'admitted_progress_inactivity',
    });
    expect(outcome.durationMs).toBeGreaterThan(1_500);
    expect(outcome.durationMs).toBeLessThan(20_000);
    expect(pidsIn(pidfile)).toHaveLength(1);
    // --json sends the child's stdout to stderr, and prints no issue line for success.
    expect(stderr).toContain('working on step 29\n');
    expect(issueCodes(stderr)).toEqual([]);
  });

  test('the same child under a total_deadline action is killed at the deadline: DEADLINE_EXPIRED, exit 124', () => {
    const pidfile = file('total.pid');
    const { code, stderr, outcome } = run('total', 400, counted(pidfile, provider('marks', 100, 15)));
    expect(code).toBe(124);
    expect(outcome).toMatchObject({
      status: 'timeout',
      code: 'DEADLINE_EXPIRED',
      exitCode: 124,
      // Killed by the teardown, not finished by itself: marks could not renew anything.
      childExitCode: 143,
      signal: 'SIGTERM',
      providerStarted: true,
      attempts: 1,
      marks: 0,
      cleanupConfirmed: true,
      timedOut: true,
      leaseExpired: false,
      cancelled: false,
      timeoutMode: 'total_deadline',
    });
    expect(pidsIn(pidfile)).toHaveLength(1);
    expect(issueCodes(stderr)).toEqual(['DEADLINE_EXPIRED']);
  });

  test.each(['fd', ...TRACKERS])(
    'a chatty child with no admitted progress expires under %s: LEASE_EXPIRED, exit 124',
    (source) => {
      const pidfile = file('chatty.pid');
      const { code, stderr, outcome } = run(source, 1_500, counted(pidfile, provider('chatty', 10_000)));
      expect(code).toBe(124);
      expect(outcome).toMatchObject({
        status: 'timeout',
        code: 'LEASE_EXPIRED',
        exitCode: 124,
        childExitCode: 143,
        providerStarted: true,
        attempts: 1,
        // step-lifecycle admits the first sighting of the frame chatty then repeats; its
        // duplicates (and everything else) admit nothing, so the lease still expires.
        marks: source === 'step-lifecycle' ? 1 : 0,
        cleanupConfirmed: true,
        timedOut: true,
        leaseExpired: true,
        cancelled: false,
      });
      expect(outcome.durationMs).toBeLessThan(9_000);
      expect(pidsIn(pidfile)).toHaveLength(1);
      expect(stderr).toContain('log line\n');
      expect(issueCodes(stderr)).toEqual(['LEASE_EXPIRED']);
    },
  );

  test.each(TRACKERS)('structured %s events every 100 ms x24 renew a 1.5 s lease: ok', (kind) => {
    const pidfile = file('events.pid');
    const { code, outcome } = run(kind, 1_500, counted(pidfile, provider('events', kind, 100, 24)));
    expect(code).toBe(0);
    expect(outcome).toMatchObject({ status: 'ok', code: null, exitCode: 0, attempts: 1, providerStarted: true, cleanupConfirmed: true, leaseExpired: false });
    // Each step opens and closes one identity (or advances the counter twice): 2 marks.
    expect(outcome.marks).toBeGreaterThan(0);
    expect(outcome.marks).toBe(48);
    expect(outcome.durationMs).toBeGreaterThan(1_500);
    expect(pidsIn(pidfile)).toHaveLength(1);
  });
});

describe('laneward lease run: refusals before launch spawn nothing', () => {
  const refused = {
    status: 'refused',
    code: 'DESCRIPTOR_INVALID',
    exitCode: 3,
    attempts: 0,
    providerStarted: false,
    marks: 0,
    cleanupConfirmed: true,
    timedOut: false,
    leaseExpired: false,
    cancelled: false,
  };

  function expectRefused(descriptor: string, action = 'fd', trust = keys.pub, code = 'DESCRIPTOR_INVALID'): string {
    const marker = file('never.pid');
    const result = laneward([...leaseArgs(action, 400, ['--json'], descriptor, trust), '--', ...counted(marker, provider('marks', 10, 3))]);
    expect(result.code).toBe(3);
    expect(JSON.parse(result.stdout)).toMatchObject({ ...refused, code, action });
    expect(codesOf(result.stderr)).toEqual([code]);
    expect(existsSync(marker)).toBe(false);
    return result.stderr;
  }

  test('an unsigned descriptor', () => {
    const copy = file('unsigned.json');
    copyFileSync(actions, copy);
    expectRefused(copy);
  });

  test('a tampered descriptor (signature of other bytes)', () => {
    const copy = file('tampered.json');
    writeFileSync(copy, readFileSync(actions, 'utf8').replace('"post_provider_ms": 300', '"post_provider_ms": 301'));
    expect(readFileSync(copy, 'utf8')).not.toBe(readFileSync(actions, 'utf8'));
    copyFileSync(`${actions}.sig`, `${copy}.sig`);
    expectRefused(copy);
  });

  test('a descriptor of another schema_version, validly signed', () => {
    const other = file('v2.json');
    writeFileSync(other, JSON.stringify({ schema_version: 2, actions: ACTIONS }));
    expect(laneward(['actions', 'sign', other, '--key', keys.key]).code).toBe(0);
    expectRefused(other);
  });

  test('an action the descriptor does not list: ACTION_UNKNOWN, whose fix names --action', () => {
    expect(expectRefused(actions, 'no.such.action', keys.pub, 'ACTION_UNKNOWN')).toMatch(/; fix: name one of the actions the message lists .*, or --action \(ACTION_UNKNOWN\)\n$/);
  });

  test('a trust file that is no public key: TRUST_KEY_UNUSABLE, whose fix names --trust', () => {
    expect(expectRefused(actions, 'fd', keys.key, 'TRUST_KEY_UNUSABLE')).toMatch(/; fix: point the crew file's actions\.trust \(or --trust\) at the actions\.pub .*\(TRUST_KEY_UNUSABLE\)\n$/);
  });

  test('a descriptor signed by a key other than the trusted one', () => {
    const dir = file('other-keys');
    expect(laneward(['actions', 'keygen', '--out', dir]).code).toBe(0);
    expectRefused(actions, 'fd', join(dir, 'actions.pub'));
  });

  test('no file descriptor left for the progress pipe: PROGRESS_CHANNEL_UNAVAILABLE, exit 3, nothing spawned', () => {
    // The lowest open-file limit under which laneward boots and reads the descriptor
    // leaves too few descriptors for the child's pipes (fd 3 among them): found by
    // raising the limit one at a time until the outcome is no longer a read failure.
    const marker = file('never.pid');
    const args = [...leaseArgs('fd', 2_000, ['--json']), '--', ...counted(marker, provider('exit'))];
    let found: { limit: number; code: number | null; outcome: Outcome; stderr: string } | undefined;
    for (let limit = 12; limit <= 64 && found === undefined; limit++) {
      const result = spawnSync('bash', ['-c', 'ulimit -n "$0" && exec "$@"', String(limit), NODE, BUNDLE, ...args], { cwd: ROOT, encoding: 'utf8' });
      if (!result.stdout.startsWith('{')) continue; // node itself could not start
      const outcome = JSON.parse(result.stdout) as Outcome;
      if (outcome.code === 'DESCRIPTOR_INVALID') continue; // could not even read the files
      found = { limit, code: result.status, outcome, stderr: result.stderr };
    }
    expect(found, 'an open-file limit at which laneward runs').toBeDefined();
    expect(found!.code).toBe(3);
    expect(found!.outcome).toMatchObject({ status: 'refused', code: 'PROGRESS_CHANNEL_UNAVAILABLE', exitCode: 3, attempts: 0, providerStarted: false, marks: 0, cleanupConfirmed: true });
    expect(issueCodes(found!.stderr)).toEqual(['PROGRESS_CHANNEL_UNAVAILABLE']);
    expect(existsSync(marker)).toBe(false);
  });
});

describe('laneward lease run: failures after launch are typed, exit as the contract says, and clean up', () => {
  const failed = (code: string) => ({ status: 'failed', code, exitCode: 1, providerStarted: true, attempts: 1, cleanupConfirmed: true, timedOut: false, leaseExpired: false, cancelled: false });

  test('the progress channel closed while the provider runs: PROGRESS_CHANNEL_LOST, exit 1', () => {
    const { code, stderr, outcome } = run('fd', 2_000, provider('close-fd', 10_000));
    expect(code).toBe(1);
    expect(outcome).toMatchObject({ ...failed('PROGRESS_CHANNEL_LOST'), marks: 1, childExitCode: 143 });
    expect(issueCodes(stderr)).toEqual(['PROGRESS_CHANNEL_LOST']);
  });

  test('a byte other than 0x01 on the progress fd: PROGRESS_INVALID, exit 1', () => {
    const { code, outcome } = run('fd', 2_000, provider('bad-mark', 10_000));
    expect(code).toBe(1);
    expect(outcome).toMatchObject({ ...failed('PROGRESS_INVALID'), marks: 0, childExitCode: 143 });
  });

  test('a counter that goes backwards (jsonl-counter): PROGRESS_INVALID, exit 1', () => {
    const { code, outcome } = run('jsonl-counter', 2_000, provider('counter-regress', 10_000));
    expect(code).toBe(1);
    expect(outcome).toMatchObject({ ...failed('PROGRESS_INVALID'), marks: 1, childExitCode: 143 });
  });

  test('stdout over --stdout-limit: OUTPUT_LIMIT, exit 1', () => {
    const { code, stderr, outcome } = run('fd', 2_000, provider('flood', 1 << 20), ['--stdout-limit', '1000']);
    expect(code).toBe(1);
    expect(outcome).toMatchObject({ ...failed('OUTPUT_LIMIT'), childExitCode: 143 });
    // Nothing past the limit was passed on.
    expect(stderr.length).toBeLessThan(1 << 20);
  });

  test('the provider exits non-zero by itself: its own status, CHILD_FAILED', () => {
    const { code, stderr, outcome } = run('fd', 2_000, provider('exit', 7));
    expect(code).toBe(7);
    expect(outcome).toMatchObject({ status: 'failed', code: 'CHILD_FAILED', exitCode: 7, childExitCode: 7, attempts: 1, providerStarted: true, cleanupConfirmed: true });
    expect(issueCodes(stderr)).toEqual([]);
  });

  test('a descendant outside the group holds stdout past post_provider_ms: POST_PROVIDER_TIMEOUT, exit 124', async () => {
    const pidfile = file('escaped.pid');
    try {
      const { code, stderr, outcome } = run('short-post', 2_000, provider('escape', pidfile));
      expect(code).toBe(124);
      expect(outcome).toMatchObject({
        status: 'timeout',
        code: 'POST_PROVIDER_TIMEOUT',
        exitCode: 124,
        // The provider itself finished; only draining its output timed out.
        childExitCode: 0,
        providerStarted: true,
        attempts: 1,
        cleanupConfirmed: true,
        timedOut: true,
        leaseExpired: false,
        cancelled: false,
      });
      expect(outcome.durationMs).toBeLessThan(10_000);
      expect(issueCodes(stderr)).toEqual(['POST_PROVIDER_TIMEOUT']);
    } finally {
      if (existsSync(pidfile)) {
        const [escaped] = pidsIn(pidfile);
        killQuietly(escaped!);
        await goneOrZombie(escaped!);
      }
    }
  });

  test('a command that does not exist: COMMAND_NOT_FOUND, exit 127, nothing started', () => {
    const { code, outcome } = run('fd', 2_000, [join(root, 'no-such-command')]);
    expect(code).toBe(127);
    expect(outcome).toMatchObject({ status: 'failed', code: 'COMMAND_NOT_FOUND', exitCode: 127, attempts: 0, providerStarted: false, marks: 0 });
  });

  test('a file that is not executable: COMMAND_NOT_EXECUTABLE, exit 126, nothing started', () => {
    const script = file('not-executable.sh');
    writeFileSync(script, '#!/bin/sh\necho started > "$0.ran"\n');
    chmodSync(script, 0o644);
    const { code, outcome } = run('fd', 2_000, [script]);
    expect(code).toBe(126);
    expect(outcome).toMatchObject({ status: 'failed', code: 'COMMAND_NOT_EXECUTABLE', exitCode: 126, attempts: 0, providerStarted: false });
    expect(existsSync(`${script}.ran`)).toBe(false);
  });

  test.skipIf(!HAS_PERL)(
    'a provider that exits 0 leaving a SIGTERM-trapping descendant, grace past the teardown budget: TEARDOWN_UNPROVEN, exit 1',
    async () => {
      const pidfile = file('orphan.pid');
      // The 2000 ms grace outlasts the 200 ms teardown budget: the SIGKILL goes out only as
      // the budget ends, too late to prove anything. (128 MiB keep the descendant visibly
      // running for a while after that SIGKILL, so a teardown that looked once more right
      // after it would still see it: see the fixture.)
      const { code, stderr, outcome } = run('total', 20_000, [NODE, ORPHAN, pidfile, '128'], ['--grace-ms', '2000', '--teardown-ms', '200']);
      const [orphan] = pidsIn(pidfile);
      try {
        expect(code).toBe(1);
        expect(outcome).toMatchObject({
          status: 'failed',
          code: 'TEARDOWN_UNPROVEN',
          exitCode: 1,
          childExitCode: 0,
          providerStarted: true,
          attempts: 1,
          cleanupConfirmed: false,
          timedOut: false,
          cancelled: false,
        });
        expect(issueCodes(stderr)).toEqual(['TEARDOWN_UNPROVEN']);
        // Unproven is not abandoned: the SIGKILL was sent, so it still goes.
        await goneOrZombie(orphan!);
      } finally {
        killQuietly(orphan!);
      }
    },
  );

  test('a grandchild that traps SIGTERM is gone after an expired lease', async () => {
    const pidfile = file('grandchild.pid');
    // jsonl-counter: the grandchild mode's fd marks admit nothing, so the lease expires.
    const { code, outcome } = run('jsonl-counter', 1_500, provider('grandchild', pidfile, 10_000));
    const [grandchild] = pidsIn(pidfile);
    try {
      expect(code).toBe(124);
      expect(outcome).toMatchObject({ status: 'timeout', code: 'LEASE_EXPIRED', exitCode: 124, attempts: 1, marks: 0, cleanupConfirmed: true, leaseExpired: true });
      // It outlived the SIGTERM: only the SIGKILL after the 500 ms grace ended it.
      expect(outcome.goneMs).toBeGreaterThanOrEqual(450);
      await goneOrZombie(grandchild!);
    } finally {
      killQuietly(grandchild!);
    }
  });
});

describe('laneward lease run: cancellation', () => {
  test.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('%s to laneward while the provider runs: CANCELLED, exit %i, the group gone', async (signal, exit) => {
    const pidfile = file('cancel.pid');
    const argv = [BUNDLE, ...leaseArgs('fd', 5_000, ['--json']), '--', ...counted(pidfile, provider('marks', 100, 100))];
    const cli = spawn(NODE, argv, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    cli.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    cli.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const closed = new Promise<number | null>((resolve) => cli.once('close', (code) => resolve(code)));
    try {
      // The provider ran and its output reached laneward: supervision is under way.
      await until(() => existsSync(pidfile) && stderr.includes('working on step 0'), 15_000, 'the provider to start');
      const [pgid] = pidsIn(pidfile);
      expect(liveGroupMembers(pgid!).length).toBeGreaterThan(0);
      cli.kill(signal);
      // The bound is a timer cleared as soon as laneward exits: none is left running.
      let bound: NodeJS.Timeout | undefined;
      const code = await Promise.race([closed, new Promise((resolve) => (bound = setTimeout(() => resolve('still running'), 15_000)))]);
      clearTimeout(bound);
      expect(code).toBe(exit);
      expect(JSON.parse(stdout)).toMatchObject({
        status: 'cancelled',
        code: 'CANCELLED',
        exitCode: exit,
        providerStarted: true,
        attempts: 1,
        cleanupConfirmed: true,
        cancelled: true,
        timedOut: false,
        leaseExpired: false,
      });
      expect(issueCodes(stderr)).toEqual(['CANCELLED']);
      expect(liveGroupMembers(pgid!)).toEqual([]);
      expect(pidsIn(pidfile)).toHaveLength(1);
    } finally {
      if (cli.exitCode === null && cli.signalCode === null) cli.kill('SIGKILL');
    }
  });
});

describe('laneward lease run: plain output', () => {
  test("without --json the child's stdout passes through and the last stderr line is LEASE:", () => {
    const result = laneward([...leaseArgs('fd', 2_000), '--', ...provider('marks', 20, 3)]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('working on step 0\nworking on step 1\nworking on step 2\n');
    const last = result.stderr.trimEnd().split('\n').at(-1)!;
    expect(last.startsWith('LEASE: status=')).toBe(true);
    expect(last).toMatch(/^LEASE: status=ok code=- exit=0 attempts=1 marks=3 cleanup=confirmed durationMs=\d+$/);
  });

  test('a failure prints its issue line, and still ends with the LEASE: line', () => {
    const result = laneward([...leaseArgs('fd', 1_500), '--', ...provider('chatty', 10_000)]);
    expect(result.code).toBe(124);
    expect(result.stdout).toContain('still thinking');
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines.at(-1)).toMatch(/^LEASE: status=timeout code=LEASE_EXPIRED exit=124 attempts=1 marks=0 cleanup=confirmed durationMs=\d+$/);
    expect(issueCodes(result.stderr)).toEqual(['LEASE_EXPIRED']);
  });
});

describe('laneward lease run: usage errors exit 2 and start nothing', () => {
  const cases: [string, (marker: string) => string[]][] = [
    ['missing --timeout-ms', (m) => ['lease', 'run', '--actions', actions, '--trust', keys.pub, '--action', 'fd', '--json', '--', ...counted(m, provider('exit'))]],
    ['missing -- before the command', (m) => [...leaseArgs('fd', 400, ['--json']), ...counted(m, provider('exit'))]],
    ['no command after --', () => [...leaseArgs('fd', 400, ['--json']), '--']],
    ['an unknown option', (m) => [...leaseArgs('fd', 400, ['--json', '--bogus']), '--', ...counted(m, provider('exit'))]],
    ['a timeout that is not a whole number', (m) => [...leaseArgs('fd', 400, ['--json']).map((arg) => (arg === '400' ? '4e2' : arg)), '--', ...counted(m, provider('exit'))]],
    ['missing --action', (m) => ['lease', 'run', '--actions', actions, '--trust', keys.pub, '--timeout-ms', '400', '--', ...counted(m, provider('exit'))]],
    ['no subcommand', () => ['lease']],
  ];
  test.each(cases)('%s', (_name, args) => {
    const marker = file('usage.pid');
    const result = laneward(args(marker));
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(codesOf(result.stderr)).toEqual(['USAGE']);
    expect(existsSync(marker)).toBe(false);
  });
});
