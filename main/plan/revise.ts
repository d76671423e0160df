import { resolve } from 'node:path';
import { LanewardError } from '../../formats/codes/error.ts';
import { runCommand } from './commit.ts';
import { isCapped, reopened, type ReviseInput } from './core/revise.ts';
import { archiveFiles } from './files/archive.ts';
import { locateRun } from './locate.ts';
import { readPlanFile } from './plan-file.ts';
import type { PlanReport } from './report.ts';
import type { PlanEnv } from './settings.ts';

export interface ReviseOptions {
  readonly out: string | undefined;
  readonly plan?: string;
  readonly incorporates?: readonly string[];
  readonly settle?: string;
  readonly withdraw?: string;
}

/**
 * `plan revise`: the owner changed the plan (see core/revise.ts). `--incorporates`
 * discharges the named accepted changes (and refuses an unchanged plan); `--settle` and
 * `--withdraw` discharge one change without a plan edit. One transaction: a crash leaves
 * the run unrevised or revised, and the files derived from it are rewritten by the next
 * command (archives of the files a reopened phase replaces are copies made first).
 */
export async function planRevise(options: ReviseOptions, planEnv: PlanEnv): Promise<PlanReport> {
  const modes = [options.plan, options.settle, options.withdraw].filter((v) => v !== undefined).length;
  if (modes !== 1) throw new LanewardError('USAGE', 'pass exactly one of --plan <file>, --settle <id> or --withdraw <id>');
  if (options.incorporates !== undefined && options.plan === undefined) throw new LanewardError('USAGE', '--incorporates goes with --plan');
  const located = locateRun(options.out, planEnv);
  const { record, runDir } = located;
  const plan = options.plan === undefined ? undefined : readPlanFile(resolve(planEnv.cwd, options.plan));
  if (record.ceo_only) throw new LanewardError('CEO_ONLY_NO_GATE', `run ${record.run} is a CEO-only run: there is nothing to revise`);
  let input: ReviseInput;
  if (plan !== undefined) {
    const reopen = isCapped(record) ? [] : reopened(record, plan.doc.snapshot);
    const names = reopen.flatMap((p) => [`${p}-native-prompt.md`, `${p}-outside-prompt.md`, `${p}-consensus.json`, `${p}-consensus.md`]);
    archiveFiles(runDir, names, Math.max(1, record.gate_rev));
    input = { kind: 'plan', plan, incorporates: options.incorporates ?? [] };
  } else if (options.settle !== undefined) {
    input = { kind: 'settle', decision: options.settle };
  } else {
    input = { kind: 'withdraw', decision: options.withdraw! };
  }
  return (await runCommand(located, planEnv, { type: 'revise', input }, { open: true })).report;
}
