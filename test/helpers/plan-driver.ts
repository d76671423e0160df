import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { laneward, type CliResult } from './cli.ts';

/** A plan with both required sections and three implementation items. */
export const PLAN = `# Plan: tidy the importer

## Implementation plan

1. Parse the CSV with a streaming reader.
2. Validate every row against the schema.
3. Write the rows in batches of 500.

## Review record

Nothing yet.
`;

export interface Attempt {
  readonly id: string;
  readonly phase: string;
  readonly voice: 'native' | 'outside';
  readonly prompt: string;
  readonly result: string;
}

export interface Step extends CliResult {
  readonly lines: string[];
  readonly attempts: Attempt[];
  readonly status: string | null;
  readonly snapshot: string | null;
}

/** Drives one run directory of one state root through the CLI, as a parent would. */
export class PlanDriver {
  readonly dir: string;
  readonly out: string;
  readonly state: string;
  env: NodeJS.ProcessEnv = {};
  /** Set for a command that may hang: it is killed after this long and the step says timedOut. */
  timeoutMs: number | undefined;

  constructor(root: string, name: string) {
    this.dir = join(root, name);
    mkdirSync(this.dir, { recursive: true });
    this.out = join(this.dir, 'run');
    this.state = join(root, 'state');
  }

  writePlan(text = PLAN, name = 'plan.md'): string {
    const file = join(this.dir, name);
    writeFileSync(file, text);
    return file;
  }

  plan(sub: string, ...args: string[]): Step {
    return this.raw(['plan', sub, '--out', this.out, '--state', this.state, ...args]);
  }

  raw(args: readonly string[], input?: string): Step {
    const ran = laneward(args, { cwd: this.dir, env: this.env, ...(input === undefined ? {} : { input }), ...(this.timeoutMs === undefined ? {} : { timeoutMs: this.timeoutMs }) });
    const lines = ran.stdout.split('\n').filter((line) => line !== '');
    return { ...ran, lines, attempts: lines.flatMap(parseAttempt), status: statusOf(lines), snapshot: snapshotOf(lines) };
  }

  /** Writes a result under the RESULT FORMAT for the attempt: INPUT line, prose, fence. */
  writeResult(attempt: Attempt, snapshot: string, findings: readonly object[], extra = ''): string {
    const body = [`INPUT: ${attempt.phase} ${snapshot}`, '', 'Review prose.', extra, '```gstack-findings', ...findings.map((f) => JSON.stringify(f)), '```', ''];
    writeFileSync(attempt.result, body.join('\n'));
    return attempt.result;
  }

  submit(attempt: Attempt, model: string, ...args: string[]): Step {
    return this.plan('submit', '--phase', attempt.phase, '--voice', attempt.voice, '--attempt', attempt.id, '--result', attempt.result, '--model', model, ...args);
  }

  /**
   * Runs next/submit until the run stops awaiting results (the gate, normally): every phase's voices bind the findings `review`
   * gives for them (none by default), native on claude, outside on gpt.
   */
  driveToGate(review: (phase: string, voice: string) => object[] = () => []): Step {
    let step = this.plan('next', '--plan', join(this.dir, 'plan.md'));
    for (let guard = 0; guard < 12; guard++) {
      if (step.code !== 0) throw new Error(`plan next failed: ${step.stderr}`);
      // The gate, or past it: a carried gate completes the run, a CEO-only run is reviewed.
      if (step.status !== 'awaiting_result') return step;
      for (const attempt of step.attempts) {
        this.writeResult(attempt, step.snapshot!, review(attempt.phase, attempt.voice));
        const bound = this.submit(attempt, attempt.voice === 'native' ? 'claude-opus-4' : 'gpt-5');
        if (bound.code !== 0) throw new Error(`submit failed: ${bound.stderr}`);
      }
      step = this.plan('next');
    }
    throw new Error('the run did not reach its gate');
  }
}

const ATTEMPT = /^ATTEMPT: (\S+) phase=(\S+) voice=(native|outside) prompt=(.+) result=(.+) model_family=/;

function parseAttempt(line: string): Attempt[] {
  const m = ATTEMPT.exec(line);
  return m === null ? [] : [{ id: m[1]!, phase: m[2]!, voice: m[3] as 'native' | 'outside', prompt: m[4]!, result: m[5]! }];
}

function statusOf(lines: readonly string[]): string | null {
  const last = lines.filter((l) => l.startsWith('GSTACK_RESULT: ')).pop();
  return last === undefined ? null : (/status=(\S+)/.exec(last)?.[1] ?? null);
}

function snapshotOf(lines: readonly string[]): string | null {
  for (const line of lines) {
    const m = /^PHASE: \S+ snapshot=([0-9a-f]{64})/.exec(line);
    if (m !== null) return m[1]!;
  }
  return null;
}
