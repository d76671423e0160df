// The crash and concurrency tests drive runs through these functions; plan-driver.ts is the
// class the CLI tests use. Both run the built CLI.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

// Drives review runs through the built CLI the way a parent does: reads the printed
// lines, writes results, submits, answers the gate and exports. Uses only node builtins
// so it can also be bundled into a standalone script that many processes run at once.

export interface PlanCtx {
  /** The built CLI (dist/laneward.mjs). */
  readonly bundle: string;
  /** The state root every command passes as --state. */
  readonly state: string;
  readonly cwd: string;
}

export interface Ran {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface AttemptLine {
  readonly id: string;
  readonly phase: string;
  readonly voice: string;
  readonly prompt: string;
  readonly result: string;
}

export interface Finding {
  readonly id: string;
  readonly severity: string;
  readonly title: string;
}

const ENV = { ...process.env, NO_COLOR: '1', LANEWARD_SESSION_KIND: 'interactive' };

/** One `laneward plan <args> --state <root>`, to completion. */
export function planSync(ctx: PlanCtx, args: readonly string[]): Ran {
  const child = spawnSync(process.execPath, [ctx.bundle, 'plan', ...args, '--state', ctx.state], {
    encoding: 'utf8',
    cwd: ctx.cwd,
    env: ENV,
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 64 * 1024 * 1024,
  });
  if (child.error) throw child.error;
  return { code: child.status, signal: child.signal, stdout: child.stdout, stderr: child.stderr };
}

/** Any laneward command (e.g. `artifact validate DIR`), to completion. */
export function lanewardSync(ctx: PlanCtx, args: readonly string[]): Ran {
  const child = spawnSync(process.execPath, [ctx.bundle, ...args], { encoding: 'utf8', cwd: ctx.cwd, env: ENV, stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.error) throw child.error;
  return { code: child.status, signal: child.signal, stdout: child.stdout, stderr: child.stderr };
}

/** One plan command started in the background, its output collected; `done` settles at exit. */
export function planSpawn(ctx: PlanCtx, args: readonly string[]): { child: ChildProcess; done: Promise<Ran> } {
  const child = spawn(process.execPath, [ctx.bundle, 'plan', ...args, '--state', ctx.state], { cwd: ctx.cwd, env: ENV, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const done = new Promise<Ran>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, done };
}

/** Whole lines only: a killed command may leave a torn last line. */
function lines(stdout: string): string[] {
  const all = stdout.split('\n');
  all.pop();
  return all;
}

const ATTEMPT = /^ATTEMPT: (\S+) phase=(\S+) voice=(\S+) prompt=(\S+) result=(\S+) model_family=/;

export function attemptLines(stdout: string): AttemptLine[] {
  const out: AttemptLine[] = [];
  for (const line of lines(stdout)) {
    const m = ATTEMPT.exec(line);
    if (m !== null) out.push({ id: m[1]!, phase: m[2]!, voice: m[3]!, prompt: m[4]!, result: m[5]! });
  }
  return out;
}

export function boundLines(stdout: string): string[] {
  return lines(stdout).filter((l) => l.startsWith('BOUND: '));
}

export function snapshotOf(stdout: string): { phase: string; snapshot: string } | undefined {
  for (const line of lines(stdout)) {
    const m = /^PHASE: (\S+) snapshot=([0-9a-f]{64}) /.exec(line);
    if (m !== null) return { phase: m[1]!, snapshot: m[2]! };
  }
  return undefined;
}

export function statusOf(stdout: string): string | undefined {
  const m = /^GSTACK_RESULT: skill=autoplan status=(\S+) run=/m.exec(stdout);
  return m?.[1];
}

export function gateRevOf(stdout: string): number | undefined {
  const m = /^GATE: gate_rev=(\d+) /m.exec(stdout);
  return m === null ? undefined : Number(m[1]);
}

export function spendOf(stdout: string): { spent: number; reserved: number } | undefined {
  const m = /^SPEND: spent=(\d+\.\d\d) reserved=(\d+\.\d\d) /m.exec(stdout);
  return m === null ? undefined : { spent: Number(m[1]), reserved: Number(m[2]) };
}

/** A plan with both sections and no UI or developer-tool words: phases ceo and eng. */
export function writePlan(path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, '# Plan\n\n## Implementation plan\n\n1. Add the store.\n2. Test the store.\n\n## Review record\n\n');
}

/** A result that binds: the INPUT receipt and a findings fence. */
export function resultText(phase: string, snapshot: string, findings: readonly Finding[]): string {
  return [`INPUT: ${phase} ${snapshot}`, '', 'Review.', '', '```gstack-findings', ...findings.map((f) => JSON.stringify(f)), '```', ''].join('\n');
}

/** `count` findings whose titles are unique to the attempt, mostly below High. */
export function findingsFor(attempt: string, count: number): Finding[] {
  const severities = ['Medium', 'Low', 'Informational', 'Medium', 'High'];
  return Array.from({ length: count }, (_, i) => ({ id: `F${i + 1}`, severity: severities[i % severities.length]!, title: `Issue ${i + 1} in ${attempt}` }));
}

/** A model whose family never conflicts across the two voices. */
export function modelFor(voice: string): string {
  return voice === 'native' ? 'claude-test-1' : 'gpt-test-1';
}

export interface DriveOptions {
  /** Findings per result. */
  readonly findings?: number;
  /** Dollars each submit reports, by attempt id; absent: no --usage-usd. */
  readonly usage?: (attempt: string) => number;
  /** Extra flags for the first next (e.g. --estimate-usd). */
  readonly firstNext?: readonly string[];
  /** Sees every command and its outcome (for invariants across a run). */
  readonly onRan?: (args: readonly string[], ran: Ran) => void;
  /** The bytes submitted per attempt are recorded here. */
  readonly submitted?: Map<string, string>;
}

export class DriveError extends Error {}

function expect0(args: readonly string[], ran: Ran): Ran {
  if (ran.code !== 0) throw new DriveError(`plan ${args.join(' ')} exited ${ran.code ?? ran.signal}: ${ran.stderr.trim()} ${ran.stdout.trim()}`);
  return ran;
}

/** Writes the result of an open attempt (if not written before) and submits it. */
export function submitAttempt(ctx: PlanCtx, runDir: string, attempt: AttemptLine, snapshot: string, options: DriveOptions): Ran {
  const bytes = options.submitted?.get(attempt.id) ?? resultText(attempt.phase, snapshot, findingsFor(attempt.id, options.findings ?? 2));
  options.submitted?.set(attempt.id, bytes);
  if (!existsSync(attempt.result)) writeFileSync(attempt.result, bytes);
  return planSync(ctx, submitArgs(runDir, attempt, options));
}

export function submitArgs(runDir: string, attempt: AttemptLine, options: Pick<DriveOptions, 'usage'>): string[] {
  const usage = options.usage === undefined ? [] : ['--usage-usd', options.usage(attempt.id).toFixed(2)];
  return ['submit', '--out', runDir, '--phase', attempt.phase, '--voice', attempt.voice, '--attempt', attempt.id, '--result', attempt.result, '--model', modelFor(attempt.voice), ...usage];
}

/**
 * Drives the run in `runDir` from wherever it stands to an exported, validated run
 * directory: next, submit each open attempt, ..., answer the gate as-is, export,
 * `artifact validate`. Returns the export's stdout and the validator's.
 */
export function driveToExport(ctx: PlanCtx, runDir: string, planPath: string, options: DriveOptions = {}): { exported: string; validated: string } {
  const run = (args: readonly string[]): Ran => {
    const ran = planSync(ctx, args);
    options.onRan?.(args, ran);
    return expect0(args, ran);
  };
  for (let step = 0; step < 40; step++) {
    const first = !existsSync(join(runDir, '.laneward-run'));
    const next = run(['next', '--out', runDir, ...(first ? ['--plan', planPath, ...(options.firstNext ?? [])] : [])]);
    const status = statusOf(next.stdout);
    if (status === 'awaiting_result') {
      const phase = snapshotOf(next.stdout);
      for (const attempt of attemptLines(next.stdout)) {
        const ran = submitAttempt(ctx, runDir, attempt, phase!.snapshot, options);
        options.onRan?.(submitArgs(runDir, attempt, options), ran);
        expect0(['submit', attempt.id], ran);
      }
      continue;
    }
    if (status === 'gate_pending') {
      const rev = gateRevOf(next.stdout);
      if (rev === undefined) throw new DriveError(`gate_pending without a GATE line: ${next.stdout}`);
      const answer = run(['answer', '--out', runDir, '--gate-rev', String(rev), '--reply', 'as-is', '--by', 'human']);
      if (statusOf(answer.stdout) === 'gate_pending') throw new DriveError(`as-is left the gate pending: ${answer.stdout}`);
      continue;
    }
    if (status === 'complete' || status === 'incomplete') {
      const exported = run(['export', '--out', runDir]);
      const validated = lanewardSync(ctx, ['artifact', 'validate', runDir]);
      if (validated.code !== 0 || !/^ARTIFACT_VALID/m.test(validated.stdout)) {
        throw new DriveError(`artifact validate ${runDir} exited ${validated.code}: ${validated.stdout} ${validated.stderr}`);
      }
      return { exported: exported.stdout, validated: validated.stdout };
    }
    throw new DriveError(`plan next ended with status ${status ?? 'none'}: ${next.stdout} ${next.stderr}`);
  }
  throw new DriveError(`the run in ${runDir} did not reach an export in 40 steps`);
}
