import { existsSync } from 'node:fs';
import { join, resolve as resolvePath } from 'node:path';
import type { ParseArgsConfig } from 'node:util';
import { EXIT } from '../../formats/codes/codes.ts';
import { planExitStatus } from '../../formats/codes/exit-status.ts';
import { jsonLine } from '../../formats/text/one-line.ts';
import type { PlanEnv, PlanReport } from '../plan/index.ts';
import { factLine, reportLines, resultLine } from './plan-lines.ts';
import { command, type Command, type FailureRule, type Parsed } from './command.ts';
import { PLAN_HELP } from './plan-help.ts';

type Options = NonNullable<ParseArgsConfig['options']>;

/** The options every command on a run takes. */
export const COMMON = { out: { type: 'string' }, state: { type: 'string' }, json: { type: 'boolean' } } as const;

/** The plan commands that print no GSTACK_RESULT line, not even when they fail. */
const NOT_TERMINAL: ReadonlySet<string> = new Set(['status', 'family']);

/**
 * A plan command on a run: parses `COMMON` plus `options`, calls the engine and prints its
 * report (lines ending with GSTACK_RESULT, or one JSON object with --json). A command that
 * changes the run first refuses a checkpoint directory that overlaps it, before anything
 * changes.
 */
export function reportCommand<const O extends Options>(spec: {
  readonly name: string;
  readonly options: O;
  readonly mutating: boolean;
  readonly run: (values: Parsed<O & typeof COMMON>['values'], planEnv: PlanEnv) => Promise<PlanReport> | PlanReport;
}): Command {
  return command({
    name: spec.name,
    help: PLAN_HELP,
    options: { ...COMMON, ...spec.options } as O & typeof COMMON,
    positionals: false,
    run: async ({ values }, io) => {
      const { out, state, json } = values as { out?: string; state?: string; json?: boolean };
      // Settings are read once, here: a malformed one is refused before anything changes.
      const plan = await import('../plan/index.ts');
      const planEnv = plan.readPlanEnv(process.env, process.cwd(), state);
      if (spec.mutating && out !== undefined) plan.checkpointRoot(planEnv.settings.checkpointDir, resolvePath(out));
      const report = await spec.run(values, planEnv);
      if (json === true) io.out(jsonLine(reportJson(report)));
      else for (const line of reportLines(report, !NOT_TERMINAL.has(spec.name))) io.out(line);
      return EXIT.ok;
    },
  });
}

/**
 * How a plan command fails: a refusal exits 3 (the gate reply's codes included), and is
 * one {ok: false, status: "refused", ..., runDir} object with --json, else the error line
 * and, but for a usage error, the GSTACK_RESULT line (run=- when no run exists there yet).
 */
export const PLAN_FAILURE: FailureRule = {
  exit: planExitStatus,
  json: true,
  more: (error, exit, { sub, args }) => {
    const out = error.code === 'USAGE' ? undefined : lastOut(args);
    const runDir = out === undefined ? '-' : resolvePath(out);
    const terminal = sub !== undefined && !NOT_TERMINAL.has(sub) && error.code !== 'USAGE';
    const exists = runDir !== '-' && existsSync(join(runDir, '.laneward-run'));
    return {
      fields: { status: 'refused', runDir },
      lines: terminal ? [resultLine(exit === EXIT.refused ? 'refused' : 'interrupted', exists ? runDir : '-')] : [],
    };
  },
};

/** --out as parseArgs reads it (the last one given), from a command line that parsed. */
function lastOut(args: readonly string[]): string | undefined {
  let out: string | undefined;
  for (let at = 0; at < args.length; at++) {
    const arg = args[at]!;
    if (arg === '--') break;
    if (arg === '--out') out = args[++at];
    else if (arg.startsWith('--out=')) out = arg.slice('--out='.length);
  }
  return out;
}

function reportJson(report: PlanReport): Record<string, unknown> {
  return {
    ok: true,
    status: report.status,
    run: report.run,
    runDir: report.runDir,
    ...(report.stateRoot === undefined ? {} : { stateRoot: report.stateRoot }),
    notes: report.notes.map(factLine),
    phase: report.phase ?? null,
    attempts: report.attempts,
    spend: report.spend ?? null,
    bound: report.bound,
    closed: report.closed,
    executionUnknown: report.unknown,
    gate: report.gate ?? null,
    applied: report.applied,
    approved: report.approved,
    lines: report.after.map(factLine),
  };
}
