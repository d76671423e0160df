import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findingSchema } from '../formats/schemas/findings.ts';
import { generateRun, readManifest, writeManifest } from '../fixtures/generate-run.ts';
import { runBatch } from '../main/batch/run-batch.ts';
import type { BatchOutput } from '../main/batch/batch-output.ts';
import { checkJsonlFile } from '../workers/validate/jsonl-artifact.ts';
import { readHashParse } from './baseline.ts';
import { baselineScript, mean, median, wallTimes } from './end-to-end.ts';
import { line, measure, ratio } from './measure.ts';

const SILENT: BatchOutput = { out() {}, errRaw() {}, stderrIsTTY: false };
const CLI = new URL('./laneward.cjs', import.meta.url).pathname;

export interface ValidateBenchOptions {
  readonly runs: number;
  readonly runBytes: number;
  readonly bigMb: number;
  /** Runs and bytes per run of the end-to-end comparison, timed from outside. */
  readonly e2eRuns: number;
  readonly e2eRunBytes: number;
  readonly e2eSamples: number;
  /** Samples of each command in the start-up figure. */
  readonly startSamples: number;
  /** One figure alone: a, b, c, d or e. */
  readonly only?: string | undefined;
}

/** The validator's four figures, each against a baseline measured in this same run. */
export async function benchValidate(options: ValidateBenchOptions): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'laneward-bench-'));
  try {
    const want = (figure: string) => options.only === undefined || options.only === figure;
    if (want('a')) await rowsPerSecond(root);
    if (want('b')) await batchThroughput(root, options);
    if (want('c')) bigFileRss(root, options.bigMb);
    if (want('d')) await cliStart(root, options.startSamples);
    if (want('e')) endToEnd(root, options);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** (a) findings rows/s, end to end from the file, against bare JSON.parse of the same lines. */
async function rowsPerSecond(root: string): Promise<void> {
  const dir = join(root, 'rows');
  generateRun(dir, { findingsPerVoice: 10_000 });
  const file = join(dir, 'findings.jsonl');
  const lines = readFileSync(file, 'utf8').replace(/\n$/, '').split('\n');
  const rows = lines.length;
  let issues = 0;
  const result = await measure(
    {
      'JSON.parse': () => {
        for (const text of lines) JSON.parse(text);
      },
      validate: () => {
        issues += checkJsonlFile(file, { display: "findings.jsonl", schema: findingSchema, runId: "run1" }).issues.total;
      },
    },
    { iterations: 12 },
  );
  if (issues !== 0) throw new Error(`bench findings file reported ${issues} issues`);
  const base = rows / (result['JSON.parse']!.p50 / 1000);
  const ours = rows / (result['validate']!.p50 / 1000);
  line('(a) findings rows/s', `${fmt(ours)} rows/s vs JSON.parse ${fmt(base)} rows/s = ${ratio(ours, base)} (target >= 0.40x; ${rows} rows)`);
}

/** (b) batch runs/s and MB/s with 1 and 2 workers, against single-thread read+hash+parse. */
async function batchThroughput(root: string, options: ValidateBenchOptions): Promise<void> {
  const archive = join(root, 'archive');
  const dirs: string[] = [];
  let bytes = 0;
  for (let i = 0; i < options.runs; i++) {
    const dir = join(archive, `lane-${i % 10}`, `run-${String(i).padStart(4, '0')}`);
    bytes += generateRun(dir, { seed: i + 1, targetBytes: options.runBytes }).bytes;
    dirs.push(dir);
  }
  let invalid = 0;
  const batch = (jobs: number) => async () => {
    const { summary } = await runBatch([archive], { json: false, jobs }, SILENT);
    invalid += summary.invalid;
  };
  const result = await measure(
    { baseline: () => readHashParse(dirs), 'one worker': batch(1), 'two workers': batch(2) },
    // Medians of five: this 2-core machine is noisy, and each sample is seconds long.
    { iterations: 5 },
  );
  if (invalid !== 0) throw new Error(`bench archive reported ${invalid} invalid runs`);
  const mb = bytes / 1e6;
  const show = (name: string) => {
    const seconds = result[name]!.p50 / 1000;
    return `${fmt(options.runs / seconds)} runs/s ${fmt(mb / seconds)} MB/s`;
  };
  const base = result['baseline']!.p50;
  const one = result['one worker']!.p50;
  const two = result['two workers']!.p50;
  line('(b) batch, baseline read+hash+parse', `${show('baseline')} (${options.runs} runs, ${mb.toFixed(0)} MB)`);
  line('(b) batch, --jobs 1 (coordinator only)', `${show('one worker')}, time ${ratio(one, base)} of baseline`);
  line('(b) batch, --jobs 2 (coordinator + 1 worker)', `${show('two workers')}, time ${ratio(two, base)} of baseline (target <= 1.10x, goal 0.75x)`);
  line('(b) --jobs 2 against --jobs 1', `${ratio(one, two)} (target >= 1.60x)`);
}

/** (c) peak RSS of one CLI validation of a run whose findings.jsonl is about `mb` MB. */
function bigFileRss(root: string, mb: number): void {
  const dir = join(root, 'big');
  generateRun(dir, { findingsPerVoice: 2 });
  const file = join(dir, 'findings.jsonl');
  const head = readFileSync(file);
  const hash = createHash('sha256').update(head);
  const fd = openSync(file, 'a');
  let rows = head.toString('utf8').split('\n').length - 1;
  let size = head.length;
  const filler = 'x'.repeat(180);
  try {
    for (let n = 1; size < mb * 1e6; ) {
      const chunk: string[] = [];
      for (let k = 0; k < 5_000; k++, n++) {
        chunk.push(
          `{"schema_version":1,"run":"run1","id":"run1-eng-native-${1000 + n}","phase":"eng","voice":"native","severity":"Low","title":"finding ${n} ${filler}","line":${n % 900}}\n`,
        );
      }
      const data = Buffer.from(chunk.join(''));
      writeSync(fd, data);
      hash.update(data);
      size += data.length;
      rows += chunk.length;
    }
  } finally {
    closeSync(fd);
  }
  const manifest = readManifest(dir);
  manifest['artifacts']['findings.jsonl'].sha256 = hash.digest('hex');
  manifest['counts'].findings = rows;
  writeManifest(dir, manifest);
  const probe = 'data:text/javascript,process.on("exit",()=>process.stderr.write("MAXRSS "+process.resourceUsage().maxRSS+"\\n"))';
  const child = spawnSync(process.execPath, ['--import', probe, CLI, 'artifact', 'validate', dir], { encoding: 'utf8' });
  const kb = Number(/MAXRSS (\d+)/.exec(child.stderr)?.[1] ?? Number.NaN);
  const verdict = child.stdout.trim();
  const empty = spawnSync(process.execPath, ['--import', probe, '-e', ''], { encoding: 'utf8' });
  const emptyKb = Number(/MAXRSS (\d+)/.exec(empty.stderr)?.[1] ?? Number.NaN);
  line('(c) peak RSS, 1 GB findings.jsonl', `${(kb / 1024).toFixed(0)} MB for ${(size / 1e6).toFixed(0)} MB, ${fmt(rows)} rows (${verdict}); bare node ${(emptyKb / 1024).toFixed(0)} MB (target < 512 MB)`);
  rmSync(dir, { recursive: true, force: true });
}

/**
 * (d) wall time of one `artifact validate` of a run directory, one `plan status` of a
 * started plan run and one `deadline status` of a started deadline, each a whole process,
 * against `node -e 0` run the same way (same environment: with NODE_EXTRA_CA_CERTS set,
 * node's own start is 60-90 ms here, without it 20-30 ms). Samples alternate the commands;
 * the spread is the quartiles of the wall; CPU (user + sys, all threads) is the mean over
 * the samples (the kernel counts it in 10 ms ticks).
 */
async function cliStart(root: string, samples: number): Promise<void> {
  const dir = join(root, 'one');
  generateRun(dir);
  const state = join(root, 'state');
  const planRun = join(root, 'plan-run');
  const plan = join(root, 'plan.md');
  const receipt = join(root, 'deadline.json');
  writeFileSync(plan, '# Plan\n\n## Implementation plan\n\n1. Add the store.\n2. Test the store.\n\n## Review record\n\n');
  const env = { ...process.env, NO_COLOR: '1', LANEWARD_SESSION_KIND: 'interactive' };
  const started = spawnSync(process.execPath, [CLI, 'plan', 'next', '--out', planRun, '--plan', plan, '--state', state], { encoding: 'utf8', env });
  if (started.status !== 0) throw new Error(`plan next exited ${started.status}: ${started.stderr}`);
  const deadline = spawnSync(process.execPath, [CLI, 'deadline', 'start', receipt, '3600'], { encoding: 'utf8', env });
  if (deadline.status !== 0) throw new Error(`deadline start exited ${deadline.status}: ${deadline.stderr}`);
  const times = wallTimes(
    {
      'node -e 0': [process.execPath, '-e', '0'],
      'artifact validate': [process.execPath, CLI, 'artifact', 'validate', dir],
      'plan status': [process.execPath, CLI, 'plan', 'status', '--out', planRun, '--state', state],
      'deadline status': [process.execPath, CLI, 'deadline', 'status', receipt],
    },
    samples,
    env,
  );
  const base = median(times['node -e 0']!.wall);
  const baseCpu = mean(times['node -e 0']!.cpu);
  const spread = (values: readonly number[]) => `${quantile(values, 0.25).toFixed(0)}-${quantile(values, 0.75).toFixed(0)} ms`;
  line('(d) node -e 0 (baseline), wall', `${base.toFixed(1)} ms (quartiles ${spread(times['node -e 0']!.wall)}); CPU ${baseCpu.toFixed(0)} ms; NODE_EXTRA_CA_CERTS ${process.env['NODE_EXTRA_CA_CERTS'] ? 'set' : 'unset'}`);
  for (const name of ['artifact validate', 'plan status', 'deadline status']) {
    const ours = median(times[name]!.wall);
    const cpu = mean(times[name]!.cpu);
    line(
      `(d) one ${name}, wall`,
      `${ours.toFixed(1)} ms (quartiles ${spread(times[name]!.wall)}) vs node -e 0 ${base.toFixed(1)} ms = +${(ours - base).toFixed(1)} ms, ${ratio(ours, base)} (target <= +20 ms); CPU ${cpu.toFixed(0)} ms = +${(cpu - baseCpu).toFixed(0)} ms over node's (median wall, mean CPU of ${samples})`,
    );
  }
}

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function fmt(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

/**
 * (e) End to end, as a user times it from the shell: `laneward artifact validate ARCHIVE
 * --jobs 2` as a whole process against a single-thread node script that reads, hashes and
 * JSON.parses the same files (also a whole process). Samples alternate the two commands.
 */
function endToEnd(root: string, options: ValidateBenchOptions): void {
  const archive = join(root, 'e2e');
  let bytes = 0;
  for (let i = 0; i < options.e2eRuns; i++) {
    bytes += generateRun(join(archive, `run-${String(i).padStart(4, '0')}`), { seed: i + 1, targetBytes: options.e2eRunBytes }).bytes;
  }
  const baseline = baselineScript(root);
  const times = wallTimes(
    {
      baseline: [process.execPath, baseline, archive],
      laneward: [process.execPath, CLI, 'artifact', 'validate', archive, '--jobs', '2'],
    },
    options.e2eSamples,
  );
  const base = median(times['baseline']!.wall);
  const ours = median(times['laneward']!.wall);
  const baseCpu = median(times['baseline']!.cpu);
  const oursCpu = median(times['laneward']!.cpu);
  line(
    '(e) end to end, validate --jobs 2, wall',
    `${ours.toFixed(0)} ms vs node read+hash+parse script ${base.toFixed(0)} ms = ${ratio(ours, base)} (target <= 0.75x; ${options.e2eRuns} runs, ${(bytes / 1e6).toFixed(0)} MB, median of ${options.e2eSamples})`,
  );
  line(
    '(e) end to end, validate --jobs 2, CPU',
    `${oursCpu.toFixed(0)} ms user+sys vs the script's ${baseCpu.toFixed(0)} ms = ${ratio(oursCpu, baseCpu)} (target <= 1.30x; median of ${options.e2eSamples})`,
  );
}
