import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { superviseMany } from '../main/lease/supervise-many.ts';
import { guardSpec } from '../main/deadline/guard-run.ts';
import { nowMs } from '../workers/supervise/monotonic-timer.ts';
import type { Outcome } from '../workers/supervise/outcome.ts';
import { ProcSnapshots } from '../workers/supervise/proc-snapshot.ts';
import { canRun, readProcStat, statScratch } from '../workers/supervise/proc-stat.ts';
import { SUPERVISION_DEFAULTS, type SupervisionHooks, type SupervisionSpec } from '../workers/supervise/spec.ts';
import { supervise } from '../workers/supervise/supervise.ts';
import { line, measure, ratio } from './measure.ts';

const PROVIDER = new URL('../fixtures/providers/provider.mjs', import.meta.url).pathname;

// In-process supervisions here run as a long-lived coordinator runs them: one /proc
// snapshot source for all, so each reads only what changed since the last snapshot.
const snapshots = new ProcSnapshots();
const superviseLease = (spec: SupervisionSpec, hooks: SupervisionHooks = {}) => supervise(spec, undefined, { snapshots, ...hooks });
/** The guard: a supervision in total-deadline mode, zero grace, stdio inherited (here: ignored by the probes). */
const runGuard = (argv: string[], remainingMs: number) => supervise(guardSpec(argv, remainingMs, nowMs()), undefined, { snapshots });

function spec(argv: string[], overrides: Partial<SupervisionSpec> = {}): SupervisionSpec {
  return {
    argv,
    stdio: 'pipe',
    action: null,
    descriptorSha256: null,
    mode: 'admitted_progress_inactivity',
    progress: 'fd',
    timeoutMs: 5_000,
    cleanupReserveMs: 0,
    postProviderMs: 5_000,
    ...SUPERVISION_DEFAULTS,
    startedAt: nowMs(),
    ...overrides,
  };
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const ms = (value: number) => `${value.toFixed(2)} ms`;
const pair = (values: readonly number[]) => `p50 ${ms(percentile(values, 50))} p99 ${ms(percentile(values, 99))}`;

/** The supervision figures, each against a baseline measured in this same run. */
export async function benchLease(options: { samples: number; fleet: number }): Promise<void> {
  await markToRenewal();
  await streamMarkToRenewal();
  await expiryLatency(options.samples);
  await probeOverhead();
  await fleetExpiry(options.fleet);
  await termIgnoringTree(Math.max(5, Math.round(options.samples / 4)));
  await sessionFleetExpiry(options.fleet);
  // deadline status's start-up is figure (d) of the validate suite, beside the other commands'.
}

/** Mark written by the child (its monotonic stamp) to the lease renewed, against a bare pipe read. */
async function markToRenewal(): Promise<void> {
  const count = 300;
  const stamps = (chunks: string[]) =>
    chunks.join('').split('\n').filter((l) => l.startsWith('MARK_AT ')).map((l) => Number(BigInt(l.slice(8))) / 1e6);
  const argv = [process.execPath, PROVIDER, 'stamped-marks', '3', String(count)];

  const stderr: string[] = [];
  const renewals: number[] = [];
  await superviseLease(spec(argv), { onStderr: (c) => stderr.push(c.toString()), onRenewal: (at) => renewals.push(at) });
  const leased = stamps(stderr).map((at, i) => renewals[i]! - at).filter(Number.isFinite);

  const bareErr: string[] = [];
  const arrivals: number[] = [];
  await new Promise<void>((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe', 'pipe'], env: { ...process.env, LANEWARD_PROGRESS_FD: '3' } });
    child.stderr!.on('data', (c: Buffer) => bareErr.push(c.toString()));
    (child.stdio[3] as Readable).on('data', (c: Buffer) => {
      const at = nowMs();
      for (let i = 0; i < c.length; i++) arrivals.push(at);
    });
    child.on('close', () => resolve());
  });
  const bare = stamps(bareErr).map((at, i) => arrivals[i]! - at).filter(Number.isFinite);
  line('mark to renewal', `${pair(leased)} vs bare pipe read ${pair(bare)} (target p99 < 1 ms; ${leased.length} marks)`);
}

/**
 * A mark in the provider's stdout stream to the lease renewed: stdout through a pipe,
 * against stdout written to a file the child holds and the supervisor follows (what a
 * reviewer, agent or observer call uses, so its stream outlives a coordinator that dies).
 */
async function streamMarkToRenewal(): Promise<void> {
  const count = 300;
  const script = `const s=(ms)=>new Promise(r=>setTimeout(r,ms));for(let i=0;i<${count};i++){await s(3);process.stderr.write('MARK_AT '+process.hrtime.bigint()+'\\n');process.stdout.write(JSON.stringify({type:'step_update',conversation_id:'c',step_index:i,status:'in_progress'})+'\\n');}`;
  const argv = [process.execPath, '--input-type=module', '-e', script];
  const stamps = (chunks: string[]) =>
    chunks.join('').split('\n').filter((l) => l.startsWith('MARK_AT ')).map((l) => Number(BigInt(l.slice(8))) / 1e6);
  const dir = mkdtempSync(join(tmpdir(), 'laneward-bench-stream-'));
  try {
    const latencies = async (over: Partial<SupervisionSpec>) => {
      const stderr: string[] = [];
      const renewals: number[] = [];
      await superviseLease(spec(argv, { progress: 'step-lifecycle', ...over }), { onStderr: (c) => stderr.push(c.toString()), onRenewal: (at) => renewals.push(at) });
      return stamps(stderr).map((at, i) => renewals[i]! - at).filter(Number.isFinite);
    };
    const piped = await latencies({});
    const filed = await latencies({ stdoutFile: join(dir, 'stdout.jsonl') });
    line('stream mark to renewal', `stdout file ${pair(filed)} vs pipe ${pair(piped)} (${filed.length}/${piped.length} marks)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Expiry to first signal and to the group proven gone, against plain setTimeout lateness. */
async function expiryLatency(samples: number): Promise<void> {
  const lateness: number[] = [];
  for (let i = 0; i < samples; i++) {
    const due = nowMs() + 20;
    await new Promise<void>((resolve) => setTimeout(resolve, 20));
    lateness.push(nowMs() - due);
  }
  const guardSignal: number[] = [];
  const leaseSignal: number[] = [];
  const leaseGone: number[] = [];
  for (let i = 0; i < samples; i++) {
    const guard = await runGuard(['sleep', '30'], 20);
    if (guard.expiryLateMs !== null && guard.firstSignalMs !== null) guardSignal.push(guard.expiryLateMs + guard.firstSignalMs);
    const lease = await superviseLease(spec(['sleep', '30'], { timeoutMs: 20 }));
    if (lease.expiryLateMs !== null && lease.firstSignalMs !== null) leaseSignal.push(lease.expiryLateMs + lease.firstSignalMs);
    if (lease.expiryLateMs !== null && lease.goneMs !== null) leaseGone.push(lease.expiryLateMs + lease.goneMs);
  }
  line('setTimeout lateness (baseline)', pair(lateness));
  line('guard: expiry to SIGKILL', `${pair(guardSignal)}; p99 ${ms(percentile(guardSignal, 99) - percentile(lateness, 99))} over timer lateness (target <= 5 ms)`);
  line('lease: expiry to SIGTERM', `${pair(leaseSignal)}; p99 ${ms(percentile(leaseSignal, 99) - percentile(lateness, 99))} over timer lateness (target <= 5 ms)`);
  line('lease: expiry to group proven gone', `${pair(leaseGone)} (${samples} samples)`);
}

/** Per-probe cost of in-process supervision of /bin/true against a bare spawn and GNU timeout. */
async function probeOverhead(): Promise<void> {
  const exit = (command: string, args: string[]) =>
    new Promise<void>((resolve, reject) => spawn(command, args, { stdio: 'ignore' }).once('exit', () => resolve()).once('error', reject));
  const result = await measure(
    {
      'bare spawn': () => exit('/bin/true', []),
      'GNU timeout': () => exit('timeout', ['5', '/bin/true']),
      guard: async () => void (await runGuard(['/bin/true'], 5_000)),
      lease: async () => void (await superviseLease(spec(['/bin/true'], { mode: 'total_deadline', progress: null }))),
    },
    { iterations: 200, warmupIterations: 10 },
  );
  const bare = result['bare spawn']!.p50;
  const show = (name: string) => `${ms(result[name]!.p50)} = ${ratio(result[name]!.p50, bare)} of bare spawn`;
  line('bare spawn+reap of /bin/true', ms(bare));
  line('GNU timeout 5 /bin/true', show('GNU timeout'));
  line('guard (in-process, shared snapshots) /bin/true', `${show('guard')} (target < 1.20x)`);
  line('lease (in-process, shared snapshots)', `${show('lease')} (target < 1.20x)`);
}

/** Expiry latency with many concurrent leases in one coordinator, across the pool. */
async function fleetExpiry(count: number): Promise<void> {
  const specs = Array.from({ length: count }, () => spec(['sleep', '30'], { timeoutMs: 1_500 }));
  const started = nowMs();
  const outcomes = await superviseMany(specs, { threads: 2 });
  const expired = outcomes.filter((o) => o.code === 'LEASE_EXPIRED' && o.expiryLateMs !== null);
  const signal = expired.map((o) => o.expiryLateMs! + (o.firstSignalMs ?? 0));
  const gone = expired.map((o) => o.expiryLateMs! + (o.goneMs ?? 0));
  line(`${count} concurrent leases: expiry to SIGTERM`, `${pair(signal)}; to gone ${pair(gone)}; ${expired.length}/${count} expired, ${outcomes.filter((o) => o.cleanupConfirmed).length} proven gone, ${((nowMs() - started) / 1000).toFixed(1)} s`);
}

/** Expiry to proven gone for one tree of 50 processes that all ignore SIGTERM: grace, SIGKILL, proof. */
async function termIgnoringTree(samples: number): Promise<void> {
  const script = 'trap "" TERM; for i in $(seq 50); do sleep 30 & done; echo ready; wait';
  const gone: number[] = [];
  let proven = 0;
  for (let i = 0; i < samples; i++) {
    // Expires 600 ms after launch, long after the 50 sleeps are up (the tree prints ready).
    const outcome = await superviseLease(spec(['bash', '-c', script], { mode: 'total_deadline', progress: null, timeoutMs: 600 }));
    if (outcome.cleanupConfirmed) proven++;
    if (outcome.expiryLateMs !== null && outcome.goneMs !== null) gone.push(outcome.expiryLateMs + outcome.goneMs);
  }
  const grace = SUPERVISION_DEFAULTS.graceMs;
  const over = gone.map((value) => value - grace);
  line('50 TERM-ignoring processes: expiry to gone', `${pair(gone)}, i.e. ${pair(over)} past the ${grace} ms grace; ${proven}/${samples} proven gone`);
}

/**
 * Expiry latency of many concurrent leases whose trees span two process groups of one
 * session (`set -m` puts the background child in a group of its own), so every teardown
 * needs the /proc census, not just a group signal.
 */
async function sessionFleetExpiry(count: number): Promise<void> {
  const script = 'set -m; sleep 30 & wait';
  // 4 s: every child is running well before its deadline, so the figure is expiry to gone.
  const specs = Array.from({ length: count }, () => spec(['bash', '-c', script], { mode: 'total_deadline', progress: null, timeoutMs: 4_000 }));
  const started = nowMs();
  const outcomes: Outcome[] = await superviseMany(specs, { threads: 2 });
  const expired = outcomes.filter((o) => o.code === 'DEADLINE_EXPIRED' && o.expiryLateMs !== null);
  const signal = expired.map((o) => o.expiryLateMs! + (o.firstSignalMs ?? 0));
  const gone = expired.filter((o) => o.goneMs !== null).map((o) => o.expiryLateMs! + o.goneMs!);
  line(
    `${count} concurrent expiries, session coverage`,
    `to SIGTERM ${pair(signal)}; to gone ${pair(gone)} (target p50 < 25 ms); ${expired.length}/${count} expired, ${outcomes.filter((o) => o.cleanupConfirmed).length} proven gone, ${((nowMs() - started) / 1000).toFixed(1)} s`,
  );
  const bare = await bareSessionKill(count, script);
  line(`${count} such trees killed bare (baseline)`, `to gone ${pair(bare)}: both groups of every tree sent SIGTERM in one burst, no census, no proof`);
}

/**
 * The floor under the figure above: the same trees, each group of each sent SIGTERM at
 * once by plain kill(2), timed until neither of a tree's two processes runs (gone from
 * /proc or a zombie: exited). What is left is the kernel's and the shells' own work of
 * ending 2 x `count` processes on these cores.
 */
async function bareSessionKill(count: number, script: string): Promise<number[]> {
  const children = Array.from({ length: count }, () => spawn('bash', ['-c', script], { detached: true, stdio: 'ignore' }));
  const childOf = (pid: number): number | undefined => {
    try {
      const listed = readFileSync(`/proc/${pid}/task/${pid}/children`, 'latin1').trim();
      return listed === '' ? undefined : Number(listed.split(' ')[0]);
    } catch {
      return undefined;
    }
  };
  const trees: [number, number][] = [];
  const kill = (pgid: number, signal: NodeJS.Signals) => {
    try {
      process.kill(-pgid, signal);
    } catch {
      // Gone already.
    }
  };
  const readyBy = nowMs() + 30_000;
  for (const child of children) {
    let background = childOf(child.pid!);
    while (background === undefined && nowMs() < readyBy) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      background = childOf(child.pid!);
    }
    if (background === undefined) {
      for (const c of children) kill(c.pid!, 'SIGKILL');
      throw new Error(`bash ${child.pid} started no background child in 30 s`);
    }
    trees.push([child.pid!, background]);
  }
  // As the census judges a member: gone from /proc, or dead with no thread running.
  const scratch = statScratch();
  const running = (pid: number): boolean => {
    const stat = readProcStat(pid, scratch);
    return stat !== undefined && canRun(stat);
  };
  const start = nowMs();
  for (const [shell, background] of trees) {
    kill(shell, 'SIGTERM');
    kill(background, 'SIGTERM');
  }
  const gone = new Array<number>(trees.length).fill(-1);
  let left = trees.length;
  while (left > 0) {
    if (nowMs() - start > 30_000) {
      for (const [shell, background] of trees) (kill(shell, 'SIGKILL'), kill(background, 'SIGKILL'));
      throw new Error(`${left} of ${trees.length} trees still ran 30 s after SIGTERM`);
    }
    for (const [i, [shell, background]] of trees.entries()) {
      if (gone[i]! >= 0 || running(shell) || running(background)) continue;
      gone[i] = nowMs() - start;
      left -= 1;
    }
    if (left > 0) await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return gone;
}
