import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { isLanewardError } from '../formats/codes/error.ts';
import type { RunDriver, RunRecord } from '../formats/review/run-record.ts';
import { processStart } from '../main/process/process-alive.ts';
import { createInProcessDispatcher, type SuperviseFn } from '../main/dispatch/dispatcher.ts';
import { readPlanEnv, planNext, planRun as runPlan } from '../main/plan/index.ts';
import { openStore, readJournal, transact } from '../main/store/store.ts';
import { signedActions, type SignedActions } from './helpers/actions.ts';
import { BUNDLE, codesOf, ensureBuilt, laneward, ROOT } from './helpers/cli.ts';
import { PLAN } from './helpers/plan-driver.ts';
import { canRun, exitOf, killQuietly, procStat, until } from './helpers/procs.ts';
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

/** The run's record as its state root holds it. */
function record(c: Case): RunRecord {
  const run = readFileSync(join(c.out, '.laneward-run'), 'utf8').split(' ')[0]!;
  return openStore(c.state).runs.get(run)!;
}

/** Plants a driver's claim on the run, as a plan run's start would. */
async function setDriver(c: Case, driver: RunDriver): Promise<void> {
  const run = record(c).run;
  await transact(openStore(c.state), 'runs', run, (current) => {
    current!.driver = driver;
    return { change: { record: current!, events: [] }, result: undefined };
  });
}

/**
 * Holds the first dispatches of the ceo phase until every driver made them (or one
 * driver ended), then lets their dispatch marks happen one at a time in `order`.
 */
class DispatchRace {
  readonly calls: string[] = [];
  private readonly done = new Map<string, Promise<void>>();
  private opened!: () => void;
  private readonly open = new Promise<void>((resolve) => (this.opened = resolve));

  constructor(private readonly order: readonly string[]) {}

  release(): void {
    this.opened();
  }

  wrap(driver: string, supervise: SuperviseFn): SuperviseFn {
    return (spec, options = {}) => {
      const prompt = spec.env?.['LANEWARD_PROMPT_FILE'] ?? '';
      if (!prompt.endsWith('/ceo-native-prompt.md') && !prompt.endsWith('/ceo-outside-prompt.md')) return supervise(spec, options);
      const name = `${driver}.${prompt.includes('-native-') ? 'native' : 'outside'}`;
      this.calls.push(name);
      if (this.calls.length === this.order.length) this.release();
      let finished!: () => void;
      this.done.set(name, new Promise<void>((resolve) => (finished = resolve)));
      return supervise(spec, {
        ...options,
        onSlot: async () => {
          await this.open;
          const earlier = this.order.slice(0, this.order.indexOf(name)).filter((n) => this.calls.includes(n));
          await Promise.all(earlier.map((n) => this.done.get(n)));
          try {
            await options.onSlot?.();
          } finally {
            finished();
          }
        },
      });
    };
  }
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
    // Cancelled by the run itself: no voice failed; both wait for a fresh attempt.
    expect(journal(c).filter((e) => e.type === 'voice_failed')).toEqual([]);
    expect(journal(c).filter((e) => e.type === 'attempt_abandoned').map((e) => [e.voice, e.code]).sort()).toEqual([['native', 'CANCELLED'], ['outside', 'CANCELLED']]);
    expect(matching(result.stdout, 'VOICE: ').map((l) => l.replace(/^VOICE: \S+ /, '')).sort()).toEqual([
      'phase=ceo voice=native status=cancelled code=CANCELLED', 'phase=ceo voice=outside status=cancelled code=CANCELLED',
    ]);
    expect(reviewerLog(c).filter((e) => e.kind === 'start')).toHaveLength(2);
    expect(left(c)).toEqual([]);
  });

  test('should cancel its children on SIGTERM and end interrupted with exit 143', async () => {
    const c = newCase();
    const slow = reviewer(c, '--steps', '200', '--delay-ms', '100');
    const child = spawn(process.execPath, [BUNDLE, ...runArgs(c, slow, slow, 'fd')], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    const exited = exitOf(child);
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    await until(() => reviewerLog(c).filter((e) => e.kind === 'start').length === 2, 20_000, 'both reviewers to start');
    child.kill('SIGTERM');
    const { code } = await exited;
    expect(code).toBe(143);
    expect(matching(stdout, 'INTERRUPTED: ')).toEqual(['INTERRUPTED: reason=signal']);
    expect(lines(stdout).at(-1)).toBe(`GSTACK_RESULT: skill=autoplan status=interrupted run=${c.out}`);
    expect(journal(c).filter((e) => e.type === 'voice_failed')).toEqual([]);
    expect(journal(c).filter((e) => e.type === 'attempt_abandoned').map((e) => e.code)).toEqual(['CANCELLED', 'CANCELLED']);
    expect(left(c)).toEqual([]);
    // Started again, it dispatches both voices it cancelled as new attempts: nothing is lost.
    const resumed = planRun(c, reviewer(c), reviewer(c));
    expect(resumed.code).toBe(0);
    expect(lines(resumed.stdout).at(-1)).toBe(`GSTACK_RESULT: skill=autoplan status=gate_pending run=${c.out}`);
    expect(matching(resumed.stdout, 'DISPATCH: ').map((l) => l.split(' ').slice(2).join(' ')).sort()).toEqual([
      'phase=ceo voice=native', 'phase=ceo voice=outside', 'phase=eng voice=native', 'phase=eng voice=outside',
    ]);
    expect(matching(resumed.stdout, 'PHASE_CLOSED: ').every((l) => l.endsWith('coverage=both'))).toBe(true);
    expect(journal(c).filter((e) => e.type === 'voice_failed')).toEqual([]);
    expect(left(c)).toEqual([]);
  });

  test('should dispatch again on its next start an outside voice it cancelled when its stdout closed, after the native voice bound', async () => {
    const c = newCase();
    // The native reviewer ends soon; the outside one runs until the plan run cancels it.
    const args = runArgs(c, reviewer(c, '--steps', '3', '--delay-ms', '300'), reviewer(c, '--steps', '400', '--delay-ms', '100'), 'fd');
    const child = spawn(process.execPath, [BUNDLE, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = exitOf(child).then(({ code }) => code);
    child.stdout.on('data', () => undefined);
    await until(() => reviewerLog(c).filter((e) => e.kind === 'start').length === 2, 20_000, 'both reviewers to start');
    // The reader goes away (as `| head -1` does): the next line written, the native voice's
    // OUTCOME, breaks the pipe and the plan run cancels what still runs.
    child.stdout.destroy();
    expect(await exited).toBe(141);
    const events = journal(c);
    expect(events.filter((e) => e.type === 'result_bound').map((e) => e.voice)).toEqual(['native']);
    expect(events.filter((e) => e.type === 'voice_failed')).toEqual([]);
    expect(events.filter((e) => e.type === 'attempt_abandoned').map((e) => [e.phase, e.voice, e.code])).toEqual([['ceo', 'outside', 'CANCELLED']]);
    expect(left(c)).toEqual([]);

    const resumed = planRun(c, reviewer(c), reviewer(c));
    expect(resumed.code).toBe(0);
    expect(lines(resumed.stdout).at(-1)).toBe(`GSTACK_RESULT: skill=autoplan status=gate_pending run=${c.out}`);
    expect(matching(resumed.stdout, 'DISPATCH: ').map((l) => l.split(' ').slice(2).join(' ')).sort()).toEqual([
      'phase=ceo voice=outside', 'phase=eng voice=native', 'phase=eng voice=outside',
    ]);
    expect(matching(resumed.stdout, 'PHASE_CLOSED: ').map((l) => `${l.split(' ')[1]} ${l.split(' ').at(-1)}`)).toEqual(['ceo coverage=both', 'eng coverage=both']);
    expect(startsPerPrompt(c)).toEqual({ ...ALL_ONCE, 'ceo-outside-prompt.md': 2 });
    expect(left(c)).toEqual([]);
  });

  test('should resume a killed plan run without starting any dispatched attempt again', async () => {
    const c = newCase();
    // The native reviewer finishes on its own after the kill; the outside one is killed with it.
    // 3 s: long enough that the kill lands while it runs, on a loaded machine too.
    const args = runArgs(c, reviewer(c, '--steps', '15', '--delay-ms', '200'), reviewer(c, '--steps', '200', '--delay-ms', '100'), 'fd');
    const child = spawn(process.execPath, [BUNDLE, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    await until(() => reviewerLog(c).filter((e) => e.kind === 'start').length === 2, 20_000, 'both reviewers to start');
    // Killed once both spawns are journaled: a kill between a spawn and its journal (a window
    // a loaded CI hit) is the case of the test that finds such a child by its environment.
    await until(() => Object.values(record(c).attempts).filter((a) => a.child !== undefined && a.child !== null).length === 2, 20_000, 'both spawns to be journaled');
    child.kill('SIGKILL');
    await exitOf(child).then(({ code }) => code);
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

  test('should adopt orphans whose progress is in their stdout by following their output files, bind what they write, and start no attempt twice', async () => {
    const c = newCase();
    // 25 steps of 200 ms: 5 s of stdout progress, still running when the next plan run starts.
    const slow = reviewer(c, '--steps', '25', '--delay-ms', '200', '--format', 'step-lifecycle');
    const child = spawn(process.execPath, [BUNDLE, ...runArgs(c, slow, slow, 'step-lifecycle')], { stdio: ['ignore', 'pipe', 'pipe'] });
    await until(() => reviewerLog(c).filter((e) => e.kind === 'start').length === 2, 20_000, 'both reviewers to start');
    await until(() => Object.values(record(c).attempts).filter((a) => a.child !== undefined && a.child !== null).length === 2, 20_000, 'both spawns to be journaled');
    child.kill('SIGKILL');
    await exitOf(child).then(({ code }) => code);
    const orphans = reviewerLog(c).filter((e) => e.kind === 'start').map((e) => e.pid);
    expect(orphans.filter(canRun)).toHaveLength(2);
    const resumed = planRun(c, reviewer(c, '--format', 'step-lifecycle'), reviewer(c, '--format', 'step-lifecycle'), 'step-lifecycle');
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    // Adopted (their stream outlived their driver in their files), never torn down and sent again.
    expect(matching(resumed.stdout, 'ORPHAN: ').map((l) => `${l.split(' ').slice(2, 4).join(' ')} ${/ how=(\S+)/.exec(l)?.[1]} ${/ code=(\S+)/.exec(l)?.[1]} ${/ cleanup=(\S+)/.exec(l)?.[1]}`).sort()).toEqual([
      'phase=ceo voice=native adopted - confirmed',
      'phase=ceo voice=outside adopted - confirmed',
    ]);
    // No voice failed (EXECUTION_UNKNOWN included): both bound from what the adopted orphans wrote.
    expect(matching(resumed.stdout, 'VOICE: ')).toEqual([]);
    expect(matching(resumed.stdout, 'RESUMED: ').map((l) => l.split(' ').slice(2).join(' ')).sort()).toEqual(['phase=ceo voice=native result=found', 'phase=ceo voice=outside result=found']);
    expect(matching(resumed.stdout, 'BOUND: ').map((l) => l.split(' ').slice(2, 4).join(' ')).sort()).toEqual(['phase=ceo voice=native', 'phase=ceo voice=outside', 'phase=eng voice=native', 'phase=eng voice=outside']);
    expect(lines(resumed.stdout).at(-1)).toBe(`GSTACK_RESULT: skill=autoplan status=gate_pending run=${c.out}`);
    // Each ran its stream to its own end under the adoption's lease: every mark read back.
    const outcomes = journal(c).filter((e) => e.type === 'attempt_outcome');
    expect(outcomes.slice(0, 2).map((e) => [e.status, e.code])).toEqual([['ok', null], ['ok', null]]);
    expect(startsPerPrompt(c)).toEqual(ALL_ONCE);
    expect(orphans.filter(canRun)).toEqual([]);
    expect(left(c)).toEqual([]);
  });

  test('should find by its environment a child whose spawn its killed driver never journaled, and tear it down before dispatching again', async () => {
    const c = newCase();
    const args = runArgs(c, reviewer(c, '--steps', '400', '--delay-ms', '100'), reviewer(c, '--steps', '400', '--delay-ms', '100'), 'fd');
    const child = spawn(process.execPath, [BUNDLE, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    await until(() => reviewerLog(c).filter((e) => e.kind === 'start').length === 2, 20_000, 'both reviewers to start');
    await until(() => Object.values(record(c).attempts).filter((a) => a.child !== undefined && a.child !== null).length === 2, 20_000, 'both spawns to be journaled');
    child.kill('SIGKILL');
    await exitOf(child).then(({ code }) => code);
    const orphans = reviewerLog(c).filter((e) => e.kind === 'start').map((e) => e.pid);
    try {
      expect(orphans.filter(canRun)).toHaveLength(2);
      // As if the driver had died between each spawn and its journal: dispatched, no child.
      await transact(openStore(c.state), 'runs', record(c).run, (current) => {
        for (const attempt of Object.values(current!.attempts)) if (attempt.child !== undefined) attempt.child = null;
        return { change: { record: current!, events: [] }, result: undefined };
      });
      const resumed = planRun(c, reviewer(c), reviewer(c));
      expect(resumed.stderr).toBe('');
      expect(resumed.code).toBe(0);
      // Found and torn down (a lease cannot be renewed by anyone but its dead supervisor),
      // each before its voice is dispatched again as a new attempt.
      expect(matching(resumed.stdout, 'ORPHAN: ').map((l) => `${l.split(' ').slice(2, 4).join(' ')} ${/ how=(\S+)/.exec(l)?.[1]} ${/ cleanup=(\S+)/.exec(l)?.[1]}`).sort()).toEqual([
        'phase=ceo voice=native torn_down confirmed',
        'phase=ceo voice=outside torn_down confirmed',
      ]);
      expect(orphans.filter(canRun)).toEqual([]);
      expect(lines(resumed.stdout).at(-1)).toBe(`GSTACK_RESULT: skill=autoplan status=gate_pending run=${c.out}`);
      // Each voice is dispatched again only after its orphan was settled.
      const out = lines(resumed.stdout);
      for (const voice of ['native', 'outside']) {
        const settled = out.findIndex((l) => l.startsWith('ORPHAN: ') && l.includes(` phase=ceo voice=${voice} `));
        const dispatched = out.findIndex((l) => l.startsWith('DISPATCH: ') && l.includes(` phase=ceo voice=${voice}`));
        expect([voice, settled >= 0 && dispatched > settled]).toEqual([voice, true]);
      }
    } finally {
      for (const pid of orphans) if (canRun(pid)) killQuietly(-procStat(pid)!.pgid);
    }
  });

  test('should refuse a second plan run on a run the first still drives, starting nothing twice', async () => {
    const c = newCase();
    const args = runArgs(c, reviewer(c, '--steps', '10', '--delay-ms', '150'), reviewer(c, '--steps', '10', '--delay-ms', '150'), 'fd');
    const first = spawn(process.execPath, [BUNDLE, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    first.stdout.on('data', (chunk) => (out += chunk));
    const exited = exitOf(first).then(({ code }) => code);
    await until(() => reviewerLog(c).filter((e) => e.kind === 'start').length === 2, 20_000, 'both reviewers to start');
    const second = planRun(c, reviewer(c), reviewer(c));
    expect(second.code).toBe(3);
    expect(codesOf(second.stderr)).toEqual(['RUN_BUSY']);
    expect(second.stderr).toContain(`is driven by process ${first.pid} since `);
    expect(matching(second.stdout, 'DISPATCH: ')).toEqual([]);
    expect(lines(second.stdout).at(-1)).toBe(`GSTACK_RESULT: skill=autoplan status=refused run=${c.out}`);
    expect(await exited).toBe(0);
    expect(lines(out).at(-1)).toBe(`GSTACK_RESULT: skill=autoplan status=gate_pending run=${c.out}`);
    expect(matching(out, 'VOICE: ')).toEqual([]);
    expect(startsPerPrompt(c)).toEqual(ALL_ONCE);
    expect(left(c)).toEqual([]);
  });

  test('should let one of two plan runs racing on one run drive it and refuse the other before it dispatches anything', async () => {
    const c = newCase();
    const planEnv = readPlanEnv(process.env, c.dir, c.state);
    await planNext({ out: c.out, plan: join(root, 'plan.md') }, planEnv);
    // Both drivers reach their first dispatch before either marks one; the marks then come
    // in the order that split the voices between them (A native, B outside, A outside, B native).
    const race = new DispatchRace(['A.native', 'B.outside', 'A.outside', 'B.native']);
    const drivers = (['A', 'B'] as const).map((name) => {
      const dispatcher = createInProcessDispatcher({ limit: 2 });
      const template = [process.execPath, REVIEWER, '--log', c.log, '--steps', '5', '--delay-ms', '100', '{prompt}', '{result}'];
      const options = {
        out: c.out, native: template, outside: template, nativeModel: 'claude-test', outsideModel: 'gpt-test',
        action: 'review.fd', actionsFile: descriptor.file, trust: descriptor.trust,
      };
      const done = runPlan(options, planEnv, race.wrap(name, dispatcher.supervise)).finally(() => race.release());
      return { done, dispatcher };
    });
    const ends = await Promise.allSettled(drivers.map((d) => d.done));
    for (const d of drivers) await d.dispatcher.close();
    // A drove to the gate; B was refused by its code.
    expect(ends.map((end) => (end.status === 'fulfilled' ? end.value.status : isLanewardError(end.reason) ? end.reason.code : String(end.reason)))).toEqual(['gate_pending', 'RUN_BUSY']);
    expect(race.calls.filter((call) => call.startsWith('B.'))).toEqual([]);
    const events = journal(c);
    expect(events.filter((e) => e.type === 'voice_failed' || e.type === 'attempt_abandoned')).toEqual([]);
    expect(events.filter((e) => e.type === 'result_bound')).toHaveLength(4);
    expect(startsPerPrompt(c)).toEqual(ALL_ONCE);
    expect(record(c).driver).toBeUndefined();
    expect(left(c)).toEqual([]);
  });

  test('should refuse a plan run while a live process holds the run, and take over a claim whose process is gone or whose pid was reused', async () => {
    const c = newCase();
    expect(laneward(['plan', 'next', '--out', c.out, '--plan', join(root, 'plan.md'), '--state', c.state]).code).toBe(0);
    const holder = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      const ticks = processStart(holder.pid!)!.ticks;
      await setDriver(c, { pid: holder.pid!, ticks, token: 'held', since: '2026-01-01T00:00:00.000Z' });
      const seq = record(c).seq;
      const refused = planRun(c, reviewer(c), reviewer(c));
      expect(refused.code).toBe(3);
      expect(codesOf(refused.stderr)).toEqual(['RUN_BUSY']);
      expect(refused.stderr).toContain(`is driven by process ${holder.pid} since 2026-01-01T00:00:00.000Z`);
      expect(matching(refused.stdout, 'DISPATCH: ')).toEqual([]);
      expect(reviewerLog(c)).toEqual([]);
      expect(record(c).seq).toBe(seq);
      expect(record(c).driver?.token).toBe('held');
      // The same pid with another start tick is a later process that reuses it: no holder.
      await setDriver(c, { pid: holder.pid!, ticks: String(Number(ticks) + 1), token: 'reused', since: '2026-01-01T00:00:00.000Z' });
      const drove = planRun(c, reviewer(c), reviewer(c));
      expect(drove.code).toBe(0);
      expect(lines(drove.stdout).at(-1)).toBe(`GSTACK_RESULT: skill=autoplan status=gate_pending run=${c.out}`);
      expect(record(c).driver).toBeUndefined();
    } finally {
      holder.kill('SIGKILL');
    }
  });

  test('should refuse a bad template or a descriptor that fails verification before starting anything', () => {
    const c = newCase();
    const quote = planRun(c, "node 'unterminated {prompt}", reviewer(c));
    expect(quote.code).toBe(2);
    expect(quote.stderr).toMatch(/^laneward plan run: .*--native holds an unterminated ' quote at character 6.*\(USAGE\)\n$/);
    const args = runArgs(c, reviewer(c), reviewer(c), 'fd');
    // A trust file that is no public key at all: its own code, whose fix names --trust.
    args[args.indexOf('--trust') + 1] = join(root, 'plan.md');
    const bad = laneward(args);
    expect(bad.code).toBe(3);
    expect(bad.stderr).toMatch(/\(or --trust\) .*\(TRUST_KEY_UNUSABLE\)\n$/);
    const json = laneward([...args, '--json']);
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, status: 'refused', code: 'TRUST_KEY_UNUSABLE', fix: expect.stringContaining('(or --trust)') });
    expect(lines(bad.stdout).at(-1)).toBe('GSTACK_RESULT: skill=autoplan status=refused run=-');
    expect(reviewerLog(c)).toEqual([]);
    expect(existsSync(join(c.out, '.laneward-run'))).toBe(false);
  });
});
