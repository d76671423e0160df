/**
 * The review-run engine as the CLI and a crew use it: the commands (each resolves its
 * options, locates the run, commits one transition of the machine in core/ and writes
 * the files in files/), the settings they take, and the lookups a crew needs.
 */
export { answerRun, planAnswer, type AnswerOptions } from './answer.ts';
export { fillTemplate, splitTemplate } from './argv-template.ts';
export { settleOrphan } from './attempt-child.ts';
export { planCheck, type CheckOptions } from './check.ts';
export { checkpointRoot, listGenerations } from './checkpoint.ts';
export { attemptOf, phaseOf } from './core/records.ts';
export { planExport } from './export.ts';
export { locateRun } from './locate.ts';
export { planNext, type NextOptions } from './next.ts';
export { planRecommend } from './recommend.ts';
export { planRelease } from './release.ts';
export { type PlanReport, type ReportFact, type TerminalStatus } from './report.ts';
export { planResume } from './resume.ts';
export { planRevise, type ReviseOptions } from './revise.ts';
export { readBinding, stateRootFor } from './run-binding.ts';
export { planRun, type PlanRunEvent, type PlanRunReport, type RunStop } from './run.ts';
export { configuredStateRoot, defaultStateRoot, readPlanEnv, readPlanSettings, type PlanEnv, type PlanSettings } from './settings.ts';
export { planStatus } from './status.ts';
export { planSubmit, type SubmitOptions } from './submit.ts';
export { dispatcherAlive } from './voice-outcome.ts';
