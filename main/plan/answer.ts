import { LanewardError } from '../../formats/codes/error.ts';
import { runCommand } from './commit.ts';
import { locateRun, type Located } from './locate.ts';
import type { RunRecord } from '../../formats/review/run-record.ts';
import { currentPlanSha } from './plan-file.ts';
import type { PlanReport } from './report.ts';
import type { PlanEnv } from './settings.ts';

export interface AnswerOptions {
  readonly out: string | undefined;
  readonly gateRev: number | undefined;
  readonly reply: string | undefined;
  readonly by?: string;
  /** The owner's own words, when an agent relays them. */
  readonly ownerReply?: string;
  /** Who the words are by, when not the owner's (an agent deciding on its own authority). */
  readonly wordsBy?: string;
  /** The rec_hash of the render the owner saw; needed once a recommendation changed. */
  readonly recHash?: string;
}

// An id is visible text: no space, control, format (bidi) or separator character.
const BY = /^(human|agent:[^\s\p{C}\p{Z}]+)$/u;

/** `plan answer`: applies a reply to the gate through the reply grammar (see core/answer.ts). */
export async function planAnswer(options: AnswerOptions, planEnv: PlanEnv): Promise<PlanReport> {
  checkAnswer(options);
  return (await commitAnswer(locateRun(options.out, planEnv), options, planEnv)).report;
}

/**
 * An answer on a run the caller located already (a crew reads its gate first): the run is
 * located once, and the record the answer committed comes back with the report.
 */
export async function answerRun(located: Located, options: AnswerOptions, planEnv: PlanEnv): Promise<{ report: PlanReport; record: RunRecord }> {
  checkAnswer(options);
  return commitAnswer(located, options, planEnv);
}

type Checked = AnswerOptions & { readonly gateRev: number; readonly reply: string };

/** Refuses an answer whose flags are missing or malformed, before the run is touched. */
function checkAnswer(options: AnswerOptions): asserts options is Checked {
  if (options.gateRev === undefined) throw new LanewardError('USAGE', '--gate-rev <n> is required (the gate_rev on the GATE line)');
  if (options.reply === undefined) throw new LanewardError('USAGE', '--reply "<reply>" is required');
  if (options.by !== undefined && !BY.test(options.by)) throw new LanewardError('USAGE', `--by must be human or agent:<id>, got ${JSON.stringify(options.by)}`);
  if (options.wordsBy !== undefined && !/^agent:[^\s\p{C}\p{Z}]+$/u.test(options.wordsBy)) throw new LanewardError('USAGE', `--words-by must be agent:<id>, got ${JSON.stringify(options.wordsBy)}`);
  // Words an agent answers in on its own authority are that very agent's: they are recorded
  // under its name, and the answer under --by; the two name one agent.
  if (options.wordsBy !== undefined && options.wordsBy !== options.by) {
    throw new LanewardError('ANSWER_WORDS_BY_MISMATCH', `--words-by ${options.wordsBy} is not the answering agent (--by ${options.by ?? 'absent'}); an agent answers in its own words with --by and --words-by naming itself`);
  }
}

async function commitAnswer(located: Located, options: Checked, planEnv: PlanEnv): Promise<{ report: PlanReport; record: RunRecord }> {
  const { gateRev, reply, by, ownerReply, wordsBy, recHash } = options;
  const input = { gateRev, reply, ...defined({ by, ownerReply, wordsBy, recHash }) };
  const { report, record } = await runCommand(located, planEnv, { type: 'answer', input }, { open: true });
  const sha = currentPlanSha(record.plan_source);
  if (sha !== null && sha !== record.plan_sha256) report.notes.push({ fact: 'plan_changed', since: 'answer', source: record.plan_source, sha256: sha, reviewed: record.plan_sha256 });
  return { report, record };
}

function defined<T extends Record<string, string | undefined>>(values: T): { [K in keyof T]?: string } {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as { [K in keyof T]?: string };
}
