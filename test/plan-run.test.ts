import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { openStore, readJournal } from '../main/store/store.ts';
import { signedActions, type SignedActions } from './helpers/actions.ts';
import { BUNDLE, ensureBuilt, laneward, ROOT } from './helpers/cli.ts';
import { PLAN } from './helpers/plan-driver.ts';
import { canRun, killQuietly, procStat, until } from './helpers/procs.ts';
import { tempRoot } from './helpers/tmp.ts';

// `plan run` end to end: the built CLI, fixture reviewers as real child processes, one
// state root and run directory per test.

const root = tempRoot('plan-run');
const REVIEWER = join(ROOT, 'fixtures/reviewers/reviewer.mjs');
const FORMATS = ['fd', 'step-lifecycle', 'claude-stream-json', 'codex-json', 'jsonl-counter'] as const;
let descriptor: SignedActions;
let counter = 0;

beforeAll(() => {
  ensureBuilt();
  descriptor = signedActions(root, Object.fromEntries(FORMATS.map((format) => [
    `review.${format}`,
    { timeout_mode: 'admitted_progress_inactivity', progress: format, cleanup_reserve_ms: 0, post_provider_ms: 2000 },
  ])));
  writeFileSync(join(root, 'plan.md'), PLAN);
});

interface Case {
  readonly dir: string;
  readonly out: string;
  readonly state: string;
  readonly log: string;
}

function newCase(): Case {
  const dir = join(root, `case-${counter++}`);
  mkdirSync(dir);
  return { dir, out: join(dir, 'run'), state: join(dir, 'state'), log: join(dir, 'reviewers.log') };
}

/** A reviewer command template: the fixture with its options, then {prompt} {result}. */
const reviewer = (c: Case, ...options: string[]) => `'${process.execPath}' '${REVIEWER}' --log '${c.log}' ${options.join(' ')} {prompt} {result}`;

function runArgs(c: Case, native: string, outside: string, format: string, ...extra: string[]): string[] {
  return [
    'plan', 'run', '--out', c.out, '--plan', join(root, 'plan.md'), '--state', c.state,
    '--native', native, '--outside', outside, '--native-model', 'claude-test', '--outside-model', 'gpt-test',
    '--actions', descriptor.file, '--trust', descriptor.trust, '--action', `review.${format}`, ...extra,
  ];
}

const planRun = (c: Case, native: string, outside: string, format = 'fd', ...extra: string[]) => laneward(runArgs(c, native, outside, format, ...extra));
const lines = (stdout: string) => stdout.trim().split('\n');
const matching = (stdout: string, prefix: string) => lines(stdout).filter((line) => line.startsWith(prefix));

/** The run's journal, read from its state root. */
function journal(c: Case): { type: string; [key: string]: unknown }[] {
  const run = readFileSync(join(c.out, '.laneward-run'), 'utf8').split(' ')[0]!;
  return readJournal(openStore(c.state), run) as { type: string; [key: string]: unknown }[];
}

/** The reviewers' log: one "start|exit <pid> <prompt>" line per event. */
function reviewerLog(c: Case): { kind: string; pid: number; prompt: string }[] {
  if (!existsSync(c.log)) return [];
  return readFileSync(c.log, 'utf8').trim().split('\n').filter((l) => l !== '').map((line) => {
    const [kind, pid, prompt] = line.split(' ');
    return { kind: kind!, pid: Number(pid), prompt: prompt! };
  });
}

const startsPerPrompt = (c: Case) => {
  const counts: Record<string, number> = {};
  for (const e of reviewerLog(c)) if (e.kind === 'start') counts[e.prompt.slice(e.prompt.lastIndexOf('/') + 1)] = (counts[e.prompt.slice(e.prompt.lastIndexOf('/') + 1)] ?? 0) + 1;
  return counts;
};

const ALL_ONCE = { 'ceo-native-prompt.md': 1, 'ceo-outside-prompt.md': 1, 'eng-native-prompt.md': 1, 'eng-outside-prompt.md': 1 };
const left = (c: Case) => reviewerLog(c).filter((e) => e.kind === 'start').map((e) => e.pid).filter(canRun);

describe('laneward plan run', () => {
  test.each(FORMATS.map((format) => [format, format === 'fd' ? 3 : 6] as const))(
    'should drive a run to its gate with healthy reviewers reporting %s progress',
    (format, marks) => {
      const c = newCase();
      const result = planRun(c, reviewer(c, '--format', format), reviewer(c, '--format', format), format);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(lines(result.stdout).at(-1)).toBe(`GSTACK_RESULT: skill=autoplan status=gate_pending run=${c.out}`);
      const outcomes = matching(result.stdout, 'OUTCOME: ');
      expect(outcomes).toHaveLength(4);
      for (const line of outcomes) expect(line).toMatch(new RegExp(`status=ok code=- child_exit=0 marks=${marks} duration_ms=\\d+ cleanup=confirmed$`));
      expect(matching(result.stdout, 'BOUND: ').map((l) => l.split(' ').slice(2, 4).join(' ')).sort()).toEqual([
        'phase=ceo voice=native', 'phase=ceo voice=outside', 'phase=eng voice=native', 'phase=eng voice=outside',
      ]);
      expect(matching(result.stdout, 'PHASE_CLOSED: ').map((l) => l.split(' ')[1])).toEqual(['ceo', 'eng']);
      expect(matching(result.stdout, 'PHASE_CLOSED: ').every((l) => l.endsWith('coverage=both'))).toBe(true);
      expect(matching(result.stdout, 'GATE: gate_rev=1 ')).toHaveLength(2);
      expect(startsPerPrompt(c)).toEqual(ALL_ONCE);
      const events = journal(c);
      expect(events.filter((e) => e.type === 'attempt_dispatched')).toHaveLength(4);
      expect(events.filter((e) => e.type === 'attempt_outcome').map((e) => [e.status, e.code, e.marks])).toEqual(Array(4).fill(['ok', null, marks]));
      expect(events.filter((e) => e.type === 'result_bound')).toHaveLength(4);
    },
  );

  test('should print one JSON object with --json, progress on stderr', () => {
    const c = newCase();
    const result = planRun(c, reviewer(c), reviewer(c), 'fd', '--json');
    expect(result.code).toBe(0);
    expect(lines(result.stdout)).toHaveLength(1);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({ ok: true, status: 'gate_pending', exitCode: 0, runDir: c.out, interrupted: null, stopped: null, gate: { rev: 1, pending: 3 } });
    expect(report.attempts.map((a: { phase: string; voice: string; state: string; code: string | null }) => `${a.phase}/${a.voice}=${a.state}:${a.code}`).sort()).toEqual([
      'ceo/native=bound:null', 'ceo/outside=bound:null', 'eng/native=bound:null', 'eng/outside=bound:null',
    ]);
    expect(matching(result.stderr, 'OUTCOME: ')).toHaveLength(4);
  });

  test('should type a stalled voice LEASE_EXPIRED in the journal and the status while the other voice binds', () => {
    const c = newCase();
    const result = planRun(c, reviewer(c), reviewer(c, '--variant', 'stall'), 'fd', '--timeout-ms', '1500');
    expect(result.code).toBe(0);
    expect(lines(result.stdout).at(-1)).toBe(`GSTACK_RESULT: skill=autoplan status=gate_pending run=${c.out}`);
    expect(matching(result.stdout, 'OUTCOME: ').filter((l) => l.includes('voice=outside')).map((l) => / status=(\S+) code=(\S+) .* marks=(\d+) .* cleanup=(\S+)$/.exec(l)!.slice(1))).toEqual([
      ['timeout', 'LEASE_EXPIRED', '1', 'confirmed'], ['timeout', 'LEASE_EXPIRED', '1', 'confirmed'],
    ]);
    expect(matching(result.stdout, 'VOICE: ').map((l) => l.replace(/^VOICE: \S+ /, ''))).toEqual([
      'phase=ceo voice=outside status=failed code=LEASE_EXPIRED', 'phase=eng voice=outside status=failed code=LEASE_EXPIRED',
    ]);
    expect(matching(result.stdout, 'BOUND: ').map((l) => l.split(' ').slice(2, 4).join(' '))).toEqual(['phase=ceo voice=native', 'phase=eng voice=native']);
    expect(matching(result.stdout, 'PHASE_STATUS: ')).toEqual([
      'PHASE_STATUS: ceo state=closed native=completed outside=failed', 'PHASE_STATUS: eng state=closed native=completed outside=failed',
    ]);
    const failed = journal(c).filter((e) => e.type === 'voice_failed');
    expect(failed.map((e) => [e.phase, e.voice, e.code])).toEqual([['ceo', 'outside', 'LEASE_EXPIRED'], ['eng', 'outside', 'LEASE_EXPIRED']]);
    const status = laneward(['plan', 'status', '--out', c.out, '--state', c.state]);
    expect(matching(status.stdout, 'PHASE_STATUS: ceo ')).toEqual(['PHASE_STATUS: ceo state=closed native=completed outside=failed']);
    expect(matching(status.stdout, 'VOICE_FAILED: ').map((l) => l.replace(/^VOICE_FAILED: \S+ /, ''))).toEqual([
      'phase=ceo voice=outside status=failed code=LEASE_EXPIRED', 'phase=eng voice=outside status=failed code=LEASE_EXPIRED',
    ]);
    expect(left(c)).toEqual([]);
    expect(startsPerPrompt(c)).toEqual(ALL_ONCE);
  });

  test.each([
    ['crash', 'CHILD_FAILED', 'failed'],
    ['prose', 'RESULT_UNREADABLE', 'ok'],
    ['malformed', 'RESULT_FINDINGS_MISSING', 'ok'],
  ])('should close an outside voice that ends %s as a typed failure, never retried', (variant, code, supervision) => {
    const c = newCase();
    const result = planRun(c, reviewer(c), reviewer(c, '--variant', variant));
    expect(result.code).toBe(0);
    expect(lines(result.stdout).at(-1)).toBe(`GSTACK_RESULT: skill=autoplan status=gate_pending run=${c.out}`);
    expect(matching(result.stdout, 'OUTCOME: ').filter((l) => l.includes('voice=outside')).map((l) => / status=(\S+) /.exec(l)![1])).toEqual([supervision, supervision]);
    expect(matching(result.stdout, 'VOICE: ').map((l) => l.replace(/^VOICE: \S+ /, ''))).toEqual([
      `phase=ceo voice=outside status=failed code=${code}`, `phase=eng voice=outside status=failed code=${code}`,
    ]);
    expect(journal(c).filter((e) => e.type === 'voice_failed').map((e) => e.code)).toEqual([code, code]);
    expect(startsPerPrompt(c)).toEqual(ALL_ONCE);
  });

  test('should stop with exit 1 when the native voice fails, and go on after an explicit redispatch', () => {
    const c = newCase();
    const result = planRun(c, reviewer(c, '--variant', 'crash'), reviewer(c));
    expect(result.code).toBe(1);
    expect(lines(result.stdout).at(-1)).toBe(`GSTACK_RESULT: skill=autoplan status=awaiting_result run=${c.out}`);
    const stopped = matching(result.stdout, 'STOPPED: ');
    expect(stopped).toHaveLength(1);
    expect(stopped[0]).toMatch(/^STOPPED: phase ceo native voice failed \(CHILD_FAILED\); run plan next --redispatch \S+-a1, then plan run again$/);
    expect(matching(result.stdout, 'PHASE_STATUS: ceo ')).toEqual(['PHASE_STATUS: ceo state=open native=failed outside=completed']);
    // Run again as it is: nothing is retried by itself.
    const again = planRun(c, reviewer(c), reviewer(c));
    expect(again.code).toBe(1);
    expect(matching(again.stdout, 'DISPATCH: ')).toEqual([]);
    const a1 = /--redispatch (\S+),/.exec(stopped[0]!)![1]!;
    const redispatch = laneward(['plan', 'next', '--out', c.out, '--state', c.state, '--redispatch', a1]);
    expect(redispatch.code).toBe(0);
    expect(matching(redispatch.stdout, 'ATTEMPT: ').map((l) => l.split(' ').slice(1, 4).join(' '))).toEqual([`${a1.replace(/a1$/, 'a3')} phase=ceo voice=native`]);
    const resumed = planRun(c, reviewer(c), reviewer(c));
    expect(resumed.code).toBe(0);
    expect(lines(resumed.stdout).at(-1)).toBe(`GSTACK_RESULT: skill=autoplan status=gate_pending run=${c.out}`);
    expect(startsPerPrompt(c)).toEqual({ ...ALL_ONCE, 'ceo-native-prompt.md': 2 });
  });

  test('should cancel its children at --deadline and end interrupted (exit 124) with none left', () => {
    const c = newCase();
    const slow = (c2: Case) => reviewer(c2, '--steps', '200', '--delay-ms', '100');
    const result = planRun(c, slow(c), slow(c), 'fd', '--deadline', '0.03');
    expect(result.code).toBe(124);
    expect(matching(result.stdout, 'INTERRUPTED: ')).toEqual(['INTERRUPTED: reason=deadline']);
    expect(lines(result.stdout).at(-1)).toBe(`GSTACK_RESULT: skill=autoplan status=interrupted run=${c.out}`);
    expect(matching(result.stdout, 'OUTCOME: ').map((l) => / status=(\S+) code=(\S+) .* cleanup=(\S+)$/.exec(l)!.slice(1))).toEqual([
      ['cancelled', 'CANCELLED', 'confirmed'], ['cancelled', 'CANCELLED', 'confirmed'],
    ]);
    expect(journal(c).filter((e) => e.type === 'voice_failed').map((e) => [e.voice, e.code]).sort()).toEqual([['native', 'CANCELLED'], ['outside', 'CANCELLED']]);
    expect(reviewerLog(c).filter((e) => e.kind === 'start')).toHaveLength(2);
    expect(left(c)).toEqual([]);
  });

  test('should cancel its children on SIGTERM and end interrupted with exit 143', async () => {
    const c = newCase();
    const slow = reviewer(c, '--steps', '200', '--delay-ms', '100');
    const child = spawn(process.execPath, [BUNDLE, ...runArgs(c, slow, slow, 'fd')], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    await until(() => reviewerLog(c).filter((e) => e.kind === 'start').length === 2, 20_000, 'both reviewers to start');
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(143);
    expect(matching(stdout, 'INTERRUPTED: ')).toEqual(['INTERRUPTED: reason=signal']);
    expect(lines(stdout).at(-1)).toBe(`GSTACK_RESULT: skill=autoplan status=interrupted run=${c.out}`);
    expect(journal(c).filter((e) => e.type === 'voice_failed').map((e) => e.code)).toEqual(['CANCELLED', 'CANCELLED']);
    expect(left(c)).toEqual([]);
  });

  test('should resume a killed plan run without starting any dispatched attempt again', async () => {
    const c = newCase();
    // The native reviewer finishes on its own after the kill; the outside one is killed with it.
    // 3 s: long enough that the kill lands while it runs, on a loaded machine too.
    const args = runArgs(c, reviewer(c, '--steps', '15', '--delay-ms', '200'), reviewer(c, '--steps', '200', '--delay-ms', '100'), 'fd');
    const child = spawn(process.execPath, [BUNDLE, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    await until(() => reviewerLog(c).filter((e) => e.kind === 'start').length === 2, 20_000, 'both reviewers to start');
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    const [native, outside] = ['ceo-native-prompt.md', 'ceo-outside-prompt.md'].map((name) => reviewerLog(c).find((e) => e.kind === 'start' && e.prompt.endsWith(name))!);
    // SIGKILL cannot be caught: the orphans outlive it. Wait for the native one, end the other.
    await until(() => reviewerLog(c).some((e) => e.kind === 'exit' && e.pid === native!.pid), 20_000, 'the native reviewer to finish');
    killQuietly(-procStat(outside!.pid)!.pgid);
    await until(() => !canRun(outside!.pid), 10_000, 'the outside reviewer to end');

    const resumed = planRun(c, reviewer(c), reviewer(c));
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    expect(lines(resumed.stdout).at(-1)).toBe(`GSTACK_RESULT: skill=autoplan status=gate_pending run=${c.out}`);
    expect(matching(resumed.stdout, 'EXECUTION_UNKNOWN: ').map((l) => l.split(' ').slice(2).join(' '))).toEqual(['phase=ceo voice=native', 'phase=ceo voice=outside']);
    expect(matching(resumed.stdout, 'RESUMED: ').map((l) => l.split(' ').slice(2).join(' '))).toEqual(['phase=ceo voice=native result=found', 'phase=ceo voice=outside result=missing']);
    expect(matching(resumed.stdout, 'VOICE: ').map((l) => l.replace(/^VOICE: \S+ /, ''))).toEqual(['phase=ceo voice=outside status=failed code=EXECUTION_UNKNOWN']);
    // Both voices of a phase run at once: their lines come in either order.
    expect(matching(resumed.stdout, 'BOUND: ').map((l) => l.split(' ').slice(2, 4).join(' ')).sort()).toEqual(['phase=ceo voice=native', 'phase=eng voice=native', 'phase=eng voice=outside']);
    expect(matching(resumed.stdout, 'DISPATCH: ').map((l) => l.split(' ').slice(2).join(' ')).sort()).toEqual(['phase=eng voice=native', 'phase=eng voice=outside']);
    // One start per attempt, across both plan runs.
    expect(startsPerPrompt(c)).toEqual(ALL_ONCE);
    expect(left(c)).toEqual([]);
  });

  test('should refuse a second plan run on a run the first still drives, starting nothing twice', async () => {
    const c = newCase();
    const args = runArgs(c, reviewer(c, '--steps', '10', '--delay-ms', '150'), reviewer(c, '--steps', '10', '--delay-ms', '150'), 'fd');
    const first = spawn(process.execPath, [BUNDLE, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    first.stdout.on('data', (chunk) => (out += chunk));
    const exited = new Promise<number | null>((resolve) => first.once('exit', resolve));
    await until(() => reviewerLog(c).filter((e) => e.kind === 'start').length === 2, 20_000, 'both reviewers to start');
    const second = planRun(c, reviewer(c), reviewer(c));
    expect(second.code).toBe(3);
    expect(second.stderr).toMatch(/was dispatched at \S+ by process \d+, which still drives this run; not started twice.*\(ATTEMPT_IN_FLIGHT\)\n$/);
    expect(await exited).toBe(0);
    expect(lines(out).at(-1)).toBe(`GSTACK_RESULT: skill=autoplan status=gate_pending run=${c.out}`);
    expect(matching(out, 'VOICE: ')).toEqual([]);
    expect(startsPerPrompt(c)).toEqual(ALL_ONCE);
    expect(left(c)).toEqual([]);
  });

  test('should refuse a bad template or a descriptor that fails verification before starting anything', () => {
    const c = newCase();
    const quote = planRun(c, "node 'unterminated {prompt}", reviewer(c));
    expect(quote.code).toBe(2);
    expect(quote.stderr).toMatch(/^laneward plan run: .*--native holds an unterminated ' quote at character 6.*\(USAGE\)\n$/);
    const args = runArgs(c, reviewer(c), reviewer(c), 'fd');
    // A trust key that did not sign the descriptor (any file that is not the key).
    args[args.indexOf('--trust') + 1] = join(root, 'plan.md');
    const bad = laneward(args);
    expect(bad.code).toBe(3);
    expect(bad.stderr).toMatch(/\(DESCRIPTOR_INVALID\)\n$/);
    expect(lines(bad.stdout).at(-1)).toBe('GSTACK_RESULT: skill=autoplan status=refused run=-');
    expect(reviewerLog(c)).toEqual([]);
    expect(existsSync(join(c.out, '.laneward-run'))).toBe(false);
  });
});
