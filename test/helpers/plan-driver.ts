import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The one driver of review runs through the built CLI, as a parent drives them: it runs
// the commands in one environment (planEnv), reads the printed lines with one set of
// patterns, writes results, submits, answers the gate and exports. Two faces over the
// same code: functions on a PlanCtx (the crash and concurrency tests; they use only node
// builtins, so plan-drive-main.ts bundles them into a standalone parent) and the
// PlanDriver class (one run directory, for the CLI tests).

// ---------------------------------------------------------------------------------------
// Running commands
// ---------------------------------------------------------------------------------------

export interface PlanCtx {
  /** The built CLI (dist/laneward.cjs). */
  readonly bundle: string;
  /** The state root every plan command passes as --state. */
  readonly state: string;
  readonly cwd: string;
}

export interface Ran {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  /** True when the child outran its timeout and was killed (SIGKILL): it hung. */
  readonly timedOut?: boolean;
}

/**
 * The one environment every driven command runs in: this process's, without any
 * LANEWARD_* setting it inherited (a developer's LANEWARD_STATE_ROOT or session kind must
 * not steer a test), no colour, an interactive session; then `extra` (a test's own
 * LANEWARD_* settings) on top.
 */
export function readPlanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('LANEWARD_')) env[key] = value;
  return { ...env, NO_COLOR: '1', LANEWARD_SESSION_KIND: 'interactive', ...extra };
}

export interface RunOptions {
  readonly cwd: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly input?: string | Uint8Array;
  /** A command that may hang is killed (SIGKILL) after this long and says timedOut. */
  readonly timeoutMs?: number;
}

/** `node <bundle> <args>` to completion, in planEnv(options.env). */
export function runBundle(bundle: string, args: readonly string[], options: RunOptions): Ran {
  const child = spawnSync(process.execPath, [bundle, ...args], {
    encoding: 'utf8',
    cwd: options.cwd,
    env: readPlanEnv(options.env),
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    ...(options.input === undefined ? {} : { input: options.input }),
    maxBuffer: 64 * 1024 * 1024,
    // Killed outright: a blocked read never runs a SIGTERM handler.
    ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs, killSignal: 'SIGKILL' as const }),
  });
  const ran = { code: child.status, signal: child.signal, stdout: child.stdout, stderr: child.stderr };
  if (child.error && (child.error as NodeJS.ErrnoException).code === 'ETIMEDOUT') return { ...ran, timedOut: true };
  if (child.error) throw child.error;
  return ran;
}

/** One `laneward plan <args> --state <root>`, to completion. */
export function planSync(ctx: PlanCtx, args: readonly string[], env?: NodeJS.ProcessEnv): Ran {
  return runBundle(ctx.bundle, ['plan', ...args, '--state', ctx.state], { cwd: ctx.cwd, ...(env === undefined ? {} : { env }) });
}

/** Any laneward command (e.g. `artifact validate DIR`), to completion. */
export function lanewardSync(ctx: PlanCtx, args: readonly string[], env?: NodeJS.ProcessEnv): Ran {
  return runBundle(ctx.bundle, args, { cwd: ctx.cwd, ...(env === undefined ? {} : { env }) });
}

/** One plan command started in the background, its output collected; `done` settles at exit. */
export function planSpawn(ctx: PlanCtx, args: readonly string[], env?: NodeJS.ProcessEnv): { child: ChildProcess; done: Promise<Ran> } {
  const child = spawn(process.execPath, [ctx.bundle, 'plan', ...args, '--state', ctx.state], { cwd: ctx.cwd, env: readPlanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
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

// ---------------------------------------------------------------------------------------
// Reading what a command printed
// ---------------------------------------------------------------------------------------

export interface AttemptLine {
  readonly id: string;
  readonly phase: string;
  readonly voice: 'native' | 'outside';
  readonly prompt: string;
  readonly result: string;
}

/** What the CLI tests call an attempt line. */
export type Attempt = AttemptLine;

/**
 * Whole, non-empty lines only: a killed command may leave a torn last line, and a line
 * is only printed once its newline is.
 */
export function wholeLines(stdout: string): string[] {
  const all = stdout.split('\n');
  all.pop();
  return all.filter((line) => line !== '');
}

// Paths are printed escaped for control characters only, so they may hold spaces: the
// prompt and result paths run up to the next field's name.
const ATTEMPT = /^ATTEMPT: (\S+) phase=(\S+) voice=(native|outside) prompt=(.+) result=(.+) model_family=/;
const PHASE = /^PHASE: (\S+) snapshot=([0-9a-f]{64}) order=/;
const RESULT = /^GSTACK_RESULT: skill=autoplan status=(\S+) run=/;
const GATE = /^GATE: gate_rev=(\d+) /;
const SPEND = /^SPEND: spent=(\d+\.\d\d) reserved=(\d+\.\d\d) /;

export function attemptLines(stdout: string): AttemptLine[] {
  return wholeLines(stdout).flatMap((line) => {
    const m = ATTEMPT.exec(line);
    return m === null ? [] : [{ id: m[1]!, phase: m[2]!, voice: m[3] as 'native' | 'outside', prompt: m[4]!, result: m[5]! }];
  });
}

export function boundLines(stdout: string): string[] {
  return wholeLines(stdout).filter((l) => l.startsWith('BOUND: '));
}

/** The phase the command opened and its snapshot: the first PHASE line. */
export function snapshotOf(stdout: string): { phase: string; snapshot: string } | undefined {
  for (const line of wholeLines(stdout)) {
    const m = PHASE.exec(line);
    if (m !== null) return { phase: m[1]!, snapshot: m[2]! };
  }
  return undefined;
}

/** The run's status as the report's GSTACK_RESULT line (its last line) gives it. */
export function statusOf(stdout: string): string | undefined {
  const line = wholeLines(stdout).filter((l) => l.startsWith('GSTACK_RESULT: ')).pop();
  return line === undefined ? undefined : RESULT.exec(line)?.[1];
}

export function gateRevOf(stdout: string): number | undefined {
  const m = wholeLines(stdout).map((l) => GATE.exec(l)).find((x) => x !== null);
  return m == null ? undefined : Number(m[1]);
}

export function spendOf(stdout: string): { spent: number; reserved: number } | undefined {
  const m = wholeLines(stdout).map((l) => SPEND.exec(l)).find((x) => x !== null);
  return m == null ? undefined : { spent: Number(m[1]), reserved: Number(m[2]) };
}

// ---------------------------------------------------------------------------------------
// Plans and results
// ---------------------------------------------------------------------------------------

/** A plan with both required sections and three implementation items. */
export const PLAN = `# Plan: tidy the importer

## Implementation plan

1. Parse the CSV with a streaming reader.
2. Validate every row against the schema.
3. Write the rows in batches of 500.

## Review record

Nothing yet.
`;

/** A plan with both sections and no UI or developer-tool words: phases ceo and eng. */
export function writePlan(path: string, text = '# Plan\n\n## Implementation plan\n\n1. Add the store.\n2. Test the store.\n\n## Review record\n\n'): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

export interface Finding {
  readonly id: string;
  readonly severity: string;
  readonly title: string;
}

/** A result that binds: the INPUT receipt, prose (and `extra`), and a findings fence. */
export function resultText(phase: string, snapshot: string, findings: readonly object[], extra = ''): string {
  return [`INPUT: ${phase} ${snapshot}`, '', 'Review prose.', extra, '```gstack-findings', ...findings.map((f) => JSON.stringify(f)), '```', ''].join('\n');
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

// ---------------------------------------------------------------------------------------
// Driving a run to its export (the functions face)
// ---------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------
// One run directory (the class face)
// ---------------------------------------------------------------------------------------

export interface Step extends Ran {
  readonly lines: string[];
  readonly attempts: AttemptLine[];
  readonly status: string | null;
  readonly snapshot: string | null;
}

/** The built CLI beside the sources (resolved when a PlanDriver is made, not at import: a bundled parent passes its own). */
const defaultBundle = (): string => fileURLToPath(new URL('../../dist/laneward.cjs', import.meta.url));

/** Drives one run directory of one state root through the CLI, as a parent would. */
export class PlanDriver {
  readonly dir: string;
  readonly out: string;
  readonly state: string;
  readonly bundle: string;
  /** LANEWARD_* settings of this run's commands, over planEnv's. */
  env: NodeJS.ProcessEnv = {};
  /** Set for a command that may hang: it is killed after this long and the step says timedOut. */
  timeoutMs: number | undefined;

  constructor(root: string, name: string, bundle = defaultBundle()) {
    this.dir = join(root, name);
    mkdirSync(this.dir, { recursive: true });
    this.out = join(this.dir, 'run');
    this.state = join(root, 'state');
    this.bundle = bundle;
  }

  /** The functions face over this driver's state root and directory. */
  get ctx(): PlanCtx {
    return { bundle: this.bundle, state: this.state, cwd: this.dir };
  }

  writePlan(text = PLAN, name = 'plan.md'): string {
    const file = join(this.dir, name);
    writePlan(file, text);
    return file;
  }

  plan(sub: string, ...args: string[]): Step {
    return this.raw(['plan', sub, '--out', this.out, '--state', this.state, ...args]);
  }

  raw(args: readonly string[], input?: string | Uint8Array): Step {
    const ran = runBundle(this.bundle, args, {
      cwd: this.dir,
      env: this.env,
      ...(input === undefined ? {} : { input }),
      ...(this.timeoutMs === undefined ? {} : { timeoutMs: this.timeoutMs }),
    });
    return { ...ran, lines: wholeLines(ran.stdout), attempts: attemptLines(ran.stdout), status: statusOf(ran.stdout) ?? null, snapshot: snapshotOf(ran.stdout)?.snapshot ?? null };
  }

  /** Writes a result under the RESULT FORMAT for the attempt: INPUT line, prose, fence. */
  writeResult(attempt: AttemptLine, snapshot: string, findings: readonly object[], extra = ''): string {
    writeFileSync(attempt.result, resultText(attempt.phase, snapshot, findings, extra));
    return attempt.result;
  }

  submit(attempt: AttemptLine, model: string, ...args: string[]): Step {
    return this.plan('submit', '--phase', attempt.phase, '--voice', attempt.voice, '--attempt', attempt.id, '--result', attempt.result, '--model', model, ...args);
  }

  /**
   * Runs next/submit until the run stops awaiting results (the gate, normally): every phase's voices bind the findings `review`
   * gives for them (none by default), native on claude, outside on gpt.
   */
  driveToGate(review: (phase: string, voice: string) => object[] = () => []): Step {
    let context = this.plan('next', '--plan', join(this.dir, 'plan.md'));
    for (let guard = 0; guard < 12; guard++) {
      if (context.code !== 0) throw new Error(`plan next failed: ${context.stderr}`);
      // The gate, or past it: a carried gate completes the run, a CEO-only run is reviewed.
      if (context.status !== 'awaiting_result') return context;
      for (const attempt of context.attempts) {
        this.writeResult(attempt, context.snapshot!, review(attempt.phase, attempt.voice));
        const bound = this.submit(attempt, attempt.voice === 'native' ? 'claude-opus-4' : 'gpt-5');
        if (bound.code !== 0) throw new Error(`submit failed: ${bound.stderr}`);
      }
      context = this.plan('next');
    }
    throw new Error('the run did not reach its gate');
  }
}
