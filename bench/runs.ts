import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { RunRecord } from '../formats/review/run-record.ts';
import { planAnswer, readPlanEnv, planExport, planNext, planSubmit, type PlanEnv, type PlanReport } from '../main/plan/index.ts';
import { openStore, transact } from '../main/store/store.ts';
import { validateRun } from '../workers/validate/validate-run.ts';
import { bareFileWrites, filesPerRun } from './file-writes.ts';
import { line, ratio } from './measure.ts';

const BENCH = new URL('./bench.mjs', import.meta.url).pathname;
const PLAN = '# Plan\n\n## Implementation plan\n\n1. Add the store.\n2. Test the store.\n\n## Review record\n\n';

export interface RunsBenchOptions {
  /** Runs driven at once in one process. */
  readonly runs: number;
  /** Processes sharing one state root (the runs split between them). */
  readonly procs: number;
  /** Findings of the one result in the export run. */
  readonly findings: number;
}

/** Durable transitions per second, against bare LMDB puts; export + validate of a big run. */
export async function benchRuns(options: RunsBenchOptions): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'laneward-bench-runs-'));
  try {
    const one = await driveRuns(join(root, 'one'), options.runs, 'one');
    const baseline = await barePuts(join(root, 'one', 'state'), one.waves, one.sample);
    line(`transitions, ${options.runs} runs, 1 process`, `${rate(one.transitions, one.ms)} (${one.transitions} in ${one.ms.toFixed(0)} ms, ${one.events} journal events) = ${ratio(one.transitions / one.ms, baseline.puts / baseline.ms)} of bare puts; target >= 2,000/s`);
    line(`bare LMDB puts (baseline), 1 process`, `${rate(baseline.puts, baseline.ms)} (${baseline.puts} puts of ${baseline.bytes}-byte CBOR records in ${baseline.waves} awaited batches)`);
    for (const [phase, ms] of one.phaseMs) line(`  ${phase}`, `${ms.toFixed(0)} ms`);
    // The run directories' files are written as the commands write them (atomically, not
    // synced): creating a file is the disk's cost, whatever the code around it.
    const files = filesPerRun(join(root, 'one'), 'one', options.runs);
    const writes = await bareFileWrites(join(root, 'bare-files'), one.waves, files / (one.transitions / options.runs));
    line(`run-directory files alone (baseline), 1 process`, `${rate(writes.files, writes.ms)} files (${(files / (one.transitions / options.runs)).toFixed(2)} a command, the ${files} each run's commands made) = ${rate(writes.commands, writes.ms)} commands' files; the drive made ${ratio(one.transitions / one.ms, writes.commands / writes.ms)} of that`);
    const store = await storeTransitions(join(root, 'one', 'state'), one.waves, one.sample);
    line(`store transitions only, ${options.runs} runs, 1 process`, `${rate(store.transitions, store.ms)} (read, check, 2 journal events, write: one transaction each) = ${ratio(store.transitions / store.ms, baseline.puts / baseline.ms)} of bare puts`);
    const many = await acrossProcesses(join(root, 'many'), options, one.sample);
    line(`transitions, ${options.runs} runs, ${options.procs} processes`, `${rate(many.drive.transitions, many.drive.ms)} (${many.drive.transitions} in ${many.drive.ms.toFixed(0)} ms) = ${ratio(many.drive.transitions / many.drive.ms, many.bare.transitions / many.bare.ms)} of bare puts`);
    line(`bare LMDB puts (baseline), ${options.procs} processes`, rate(many.bare.transitions, many.bare.ms));
    await exportBig(join(root, 'big'), options.findings);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const rate = (count: number, ms: number) => `${Math.round((count / ms) * 1000).toLocaleString('en-US')}/s`;

interface Driven {
  transitions: number;
  events: number;
  /** Milliseconds inside the awaited command batches (result files are written outside). */
  ms: number;
  /** Commands per awaited batch, in order. */
  waves: number[];
  phaseMs: [string, number][];
  /** One run's final record: the shape the baseline puts. */
  sample: RunRecord;
}

/**
 * Drives `count` runs through next, both submits, next, both submits, next (the gate) and
 * answer, every run's command of a step in flight together, so the store batches their
 * commits. Only the awaited batches are timed.
 */
export async function driveRuns(dir: string, count: number, tag: string, onReady?: () => Promise<void>): Promise<Driven> {
  const planEnv: PlanEnv = readPlanEnv({ ...process.env, LANEWARD_SESSION_KIND: 'interactive' }, dir, join(dir, 'state'));
  const stateRoot = join(dir, 'state');
  const runs = Array.from({ length: count }, (_, i) => ({ out: join(dir, `${tag}-${i}`), plan: join(dir, `${tag}-${i}.md`), last: undefined as PlanReport | undefined }));
  openStore(stateRoot, { batched: true });
  for (const run of runs) writeFileSync(run.plan, PLAN);
  await onReady?.();
  const result: Driven = { transitions: 0, events: 0, ms: 0, waves: [], phaseMs: [], sample: undefined as unknown as RunRecord };
  const wave = async (name: string, commands: (() => Promise<PlanReport>)[]): Promise<PlanReport[]> => {
    const start = performance.now();
    const reports = await Promise.all(commands.map((c) => c()));
    const ms = performance.now() - start;
    result.ms += ms;
    result.transitions += commands.length;
    result.waves.push(commands.length);
    result.phaseMs.push([`${name} (${commands.length})`, ms]);
    return reports;
  };
  const submits = (reports: PlanReport[]) =>
    reports.flatMap((report, i) => {
      const snapshot = report.phase!.snapshot;
      return report.attempts.map((a) => {
        writeFileSync(a.result, `INPUT: ${a.phase} ${snapshot}\n\n\`\`\`gstack-findings\n{"id":"F1","severity":"Medium","title":"Issue in ${a.id}"}\n\`\`\`\n`);
        return () => planSubmit({ out: runs[i]!.out, phase: a.phase, voice: a.voice, attempt: a.id, result: a.result, model: a.voice === 'native' ? 'claude-bench' : 'gpt-bench' }, planEnv);
      });
    });
  let reports = await wave('next: start, open ceo', runs.map((run) => () => planNext({ out: run.out, plan: run.plan }, planEnv)));
  await wave('submit ceo x2', submits(reports));
  reports = await wave('next: open eng', runs.map((run) => () => planNext({ out: run.out }, planEnv)));
  await wave('submit eng x2', submits(reports));
  reports = await wave('next: write the gate', runs.map((run) => () => planNext({ out: run.out }, planEnv)));
  await wave('answer', reports.map((report, i) => () => planAnswer({ out: runs[i]!.out, gateRev: report.gate!.rev, reply: 'as-is', by: 'human' }, planEnv)));
  const store = openStore(stateRoot);
  for (const run of runs) {
    const id = readFileSync(join(run.out, '.laneward-run'), 'utf8').split(' ')[0]!;
    const record = store.runs.get(id)!;
    result.events += record.seq;
    result.sample = record;
  }
  return result;
}

/** Bare `store.runs.put` of records the size of the runs' own, in batches of the drive's sizes. */
async function barePuts(state: string, waves: readonly number[], sample: RunRecord): Promise<{ puts: number; ms: number; bytes: number; waves: number }> {
  const store = openStore(state);
  const bytes = store.runs.getBinary(`run-size-probe-${process.pid}`)?.length ?? (await sizeOf(store, sample));
  let puts = 0;
  let ms = 0;
  for (const [w, size] of waves.entries()) {
    const start = performance.now();
    await Promise.all(Array.from({ length: size }, (_, i) => store.runs.put(`baseline-${process.pid}-${w}-${i}`, { ...sample, seq: w })));
    ms += performance.now() - start;
    puts += size;
  }
  return { puts, ms, bytes, waves: waves.length };
}

/**
 * The store's share of a command alone: `transact` on each run's record (read it, change
 * it, append two journal events, write it), every run's transaction of a wave in flight
 * together, as the commands issue them. The rest of a command is its files.
 */
async function storeTransitions(state: string, waves: readonly number[], sample: RunRecord): Promise<{ transitions: number; ms: number }> {
  const store = openStore(state);
  let transitions = 0;
  let ms = 0;
  for (const [w, size] of waves.entries()) {
    const start = performance.now();
    await Promise.all(Array.from({ length: size }, (_, i) => transact(store, 'runs', `txn-${process.pid}-${i}`, (current) => {
      const record = current ?? { ...sample, run: `txn-${process.pid}-${i}`, seq: 0 };
      record.commands += 1;
      const at = new Date().toISOString();
      return { change: { record, events: [{ type: 'bench', at, wave: w }, { type: 'bench_done', at }] }, result: null };
    })));
    ms += performance.now() - start;
    transitions += size;
  }
  return { transitions, ms };
}

/** The encoded size of a record, as the store writes it. */
async function sizeOf(store: ReturnType<typeof openStore>, sample: RunRecord): Promise<number> {
  const key = `run-size-probe-${process.pid}`;
  await store.runs.put(key, sample);
  const size = store.runs.getBinary(key)?.length ?? 0;
  await store.runs.remove(key);
  return size;
}

interface WorkerFigure {
  transitions: number;
  start: number;
  end: number;
}

/** `procs` processes on one state root, each driving its share; timed from one GO to the last done. */
async function acrossProcesses(dir: string, options: RunsBenchOptions, sample: RunRecord): Promise<{ drive: { transitions: number; ms: number }; bare: { transitions: number; ms: number } }> {
  const share = Math.ceil(options.runs / options.procs);
  const samplePath = join(tmpdir(), `laneward-bench-sample-${process.pid}.json`);
  writeFileSync(samplePath, JSON.stringify(sample));
  try {
    const drive = await fleet(options.procs, (i) => ['runs-worker', 'drive', dir, String(share), `p${i}`]);
    const waves = [share, share * 2, share, share * 2, share, share];
    const bare = await fleet(options.procs, () => ['runs-worker', 'bare', join(dir, 'state'), waves.join(','), samplePath]);
    return { drive, bare };
  } finally {
    rmSync(samplePath, { force: true });
  }
}

/** Starts the workers, waits for every READY, says GO to all at once, sums their figures. */
async function fleet(count: number, argv: (i: number) => string[]): Promise<{ transitions: number; ms: number }> {
  const children = Array.from({ length: count }, (_, i) => spawn(process.execPath, [BENCH, ...argv(i)], { stdio: ['pipe', 'pipe', 'inherit'] }));
  const ready: Promise<void>[] = [];
  const figures: Promise<WorkerFigure>[] = [];
  for (const child of children) {
    const lines = createInterface({ input: child.stdout! });
    let markReady!: () => void;
    ready.push(new Promise<void>((resolve) => (markReady = resolve)));
    figures.push(
      new Promise<WorkerFigure>((resolve, reject) => {
        lines.on('line', (text) => {
          if (text === 'READY') markReady();
          else if (text.startsWith('FIGURE ')) resolve(JSON.parse(text.slice(7)) as WorkerFigure);
        });
        child.once('exit', (code) => reject(new Error(`bench worker exited ${code} without a figure`)));
      }),
    );
  }
  await Promise.all(ready);
  for (const child of children) child.stdin!.end('GO\n');
  const all = await Promise.all(figures);
  const start = Math.min(...all.map((f) => f.start));
  const end = Math.max(...all.map((f) => f.end));
  return { transitions: all.reduce((sum, f) => sum + f.transitions, 0), ms: end - start };
}

/** The worker side of `fleet`: `runs-worker drive <dir> <runs> <tag>` or `runs-worker bare <state> <waves> <sample.json>`. */
export async function runsWorker(args: readonly string[]): Promise<void> {
  const go = () =>
    new Promise<void>((resolve) => {
      process.stdout.write('READY\n');
      process.stdin.once('data', () => resolve());
    });
  const now = () => performance.timeOrigin + performance.now();
  if (args[0] === 'drive') {
    let start = 0;
    const driven = await driveRuns(args[1]!, Number(args[2]), args[3]!, async () => {
      await go();
      start = now();
    });
    process.stdout.write(`FIGURE ${JSON.stringify({ transitions: driven.transitions, start, end: now() })}\n`);
  } else {
    const sample = JSON.parse(readFileSync(args[3]!, 'utf8')) as RunRecord;
    const waves = args[2]!.split(',').map(Number);
    openStore(args[1]!);
    await go();
    const start = now();
    const bare = await barePuts(args[1]!, waves, sample);
    process.stdout.write(`FIGURE ${JSON.stringify({ transitions: bare.puts, start, end: now() })}\n`);
  }
  process.stdin.destroy();
}

/** One run whose ceo native result holds `findings` rows, answered, then exported and validated. */
async function exportBig(dir: string, findings: number): Promise<void> {
  const planEnv: PlanEnv = readPlanEnv({ ...process.env, LANEWARD_SESSION_KIND: 'interactive' }, dir, join(dir, 'state'));
  const stateRoot = join(dir, 'state');
  const out = join(dir, 'run');
  const plan = join(dir, 'plan.md');
  openStore(stateRoot, { batched: true });
  writeFileSync(plan, PLAN);
  const severities = ['Medium', 'Low', 'Informational', 'Medium', 'Low'];
  let report = await planNext({ out, plan }, planEnv);
  while (report.status === 'awaiting_result') {
    const snapshot = report.phase!.snapshot;
    for (const a of report.attempts) {
      const big = a.phase === 'ceo' && a.voice === 'native';
      const rows = Array.from({ length: big ? findings : 1 }, (_, i) =>
        JSON.stringify({ id: `F${i + 1}`, severity: i % 250 === 0 ? 'High' : severities[i % severities.length], title: `Finding ${i + 1} of ${a.id} about component ${i % 97}`, file: `src/module-${i % 41}.ts`, line: 1 + (i % 400) }),
      );
      writeFileSync(a.result, `INPUT: ${a.phase} ${snapshot}\n\n\`\`\`gstack-findings\n${rows.join('\n')}\n\`\`\`\n`);
      await planSubmit({ out, phase: a.phase, voice: a.voice, attempt: a.id, result: a.result, model: a.voice === 'native' ? 'claude-bench' : 'gpt-bench' }, planEnv);
    }
    report = await planNext({ out }, planEnv);
  }
  await planAnswer({ out, gateRev: report.gate!.rev, reply: 'as-is', by: 'human' }, planEnv);
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    // Each round writes every artifact afresh.
    for (const name of ['plan.md', 'review-record.md', 'decisions.jsonl', 'findings.jsonl', 'tasks.jsonl', 'timing.json', 'run.json']) rmSync(join(out, name), { force: true });
    const start = performance.now();
    const exported = await planExport({ out }, planEnv);
    times.push(performance.now() - start);
    if (!exported.after.some((f) => f.fact === 'artifact_valid')) throw new Error(`export did not validate: ${JSON.stringify(exported.after)}`);
  }
  const start = performance.now();
  const verdict = validateRun(join(out, 'run.json'));
  const validateMs = performance.now() - start;
  const counted = readFileSync(join(out, 'findings.jsonl'), 'utf8').split('\n').filter((l) => l !== '').length;
  line(`export + validate, ${counted} findings`, `first ${times[0]!.toFixed(0)} ms, then ${times.slice(1).map((t) => t.toFixed(0)).join(', ')} ms (validate alone ${validateMs.toFixed(0)} ms, ${verdict.valid ? 'valid' : 'INVALID'}); target < 1,000 ms`);
}
