/**
 * The report every plan command returns: data only. Its words (the printed lines and
 * --json's `notes` and `lines`) are made at the edge, in main/cli/plan-lines.ts.
 */
export { emptyReport, terminalStatus, type PlanReport, type ReportFact, type TerminalStatus } from './core/report.ts';
