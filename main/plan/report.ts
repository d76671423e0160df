import { oneLine } from '../../formats/issue.ts';
import type { RunState, SpendRecord } from '../../formats/review-run.ts';
import { spendLine } from './spend.ts';

export type TerminalStatus = 'awaiting_result' | 'gate_pending' | 'complete' | 'reviewed' | 'incomplete' | 'interrupted' | 'refused';

export interface AttemptFact { id: string; phase: string; voice: string; prompt: string; result: string; family: string }
export interface BoundFact { attempt: string; phase: string; voice: string; model: string; findings: number; sha256: string; again: boolean }
export interface ClosedFact { phase: string; confirmed: number; unverified: number; disagree: number; new: number; native_only: number; coverage: string }
export interface UnknownFact { attempt: string; phase: string; voice: string }
export interface GateFact { rev: number; items: number; pending: number; file: string; recRev: number; recHash: string }

/**
 * What one plan command found and did, as data. The CLI prints it as lines in the
 * contract's order, or as one JSON object with --json; nothing else decides wording.
 */
export interface PlanReport {
  run: string | null;
  runDir: string;
  status: TerminalStatus;
  stateRoot?: { path: string; durable: boolean };
  notes: string[];
  phase?: { id: string; snapshot: string; order: string[] };
  /** SCOPE and SCOPE_PIN, printed right after PHASE on a run's first next. */
  scope: string[];
  attempts: AttemptFact[];
  spend?: SpendRecord;
  bound: BoundFact[];
  closed: ClosedFact[];
  unknown: UnknownFact[];
  gate?: GateFact;
  /** CARRIED, CARRY: no and CARRIED_UNDER_DO_IT: after the GATE line, before APPROVED. */
  carry: string[];
  applied: { decision: string; title: string; chosen: string }[];
  approved: { decision: string; key: string }[];
  after: string[];
}

export function emptyReport(runDir: string, run: string | null): PlanReport {
  return { run, runDir, status: 'awaiting_result', notes: [], scope: [], carry: [], attempts: [], bound: [], closed: [], unknown: [], applied: [], approved: [], after: [] };
}

export function terminalStatus(state: RunState): TerminalStatus {
  return state === 'phase_closed' ? 'awaiting_result' : state;
}

/**
 * The printed lines, in the contract's order. Every value from input is escaped where it
 * is put in, and every line once more as a whole, so a note, a checkpoint line or a
 * message that carries a value no one escaped still prints as one line.
 */
export function reportLines(report: PlanReport, terminal: boolean): string[] {
  const lines: string[] = [];
  if (report.stateRoot !== undefined) lines.push(`STATE_ROOT: ${oneLine(report.stateRoot.path)} durable=${report.stateRoot.durable ? 'yes' : 'no'}`);
  lines.push(...report.notes);
  if (report.phase !== undefined) lines.push(`PHASE: ${report.phase.id} snapshot=${report.phase.snapshot} order=${report.phase.order.join(',')}`);
  lines.push(...report.scope);
  for (const a of report.attempts) {
    lines.push(`ATTEMPT: ${a.id} phase=${a.phase} voice=${a.voice} prompt=${oneLine(a.prompt)} result=${oneLine(a.result)} model_family=${oneLine(a.family)}`);
  }
  if (report.spend !== undefined) lines.push(spendLine(report.spend));
  for (const b of report.bound) {
    lines.push(`BOUND: ${b.attempt} phase=${b.phase} voice=${b.voice} model=${oneLine(b.model)} findings=${b.findings} sha256=${b.sha256.slice(0, 12)}`);
  }
  for (const c of report.closed) {
    lines.push(`PHASE_CLOSED: ${c.phase} confirmed=${c.confirmed} unverified=${c.unverified} disagree=${c.disagree} new=${c.new} native_only=${c.native_only} coverage=${c.coverage}`);
  }
  for (const u of report.unknown) lines.push(`EXECUTION_UNKNOWN: ${u.attempt} phase=${u.phase} voice=${u.voice}`);
  if (report.gate !== undefined) {
    const g = report.gate;
    lines.push(`GATE: gate_rev=${g.rev} items=${g.items} pending=${g.pending} file=${oneLine(g.file)}`);
    lines.push(`GATE_REC: rec_rev=${g.recRev} rec_hash=${g.recHash}`);
  }
  lines.push(...report.carry);
  for (const a of report.applied) lines.push(`APPLY: ${a.decision} ${oneLine(a.title)} -> ${oneLine(a.chosen)}`);
  for (const a of report.approved) lines.push(`APPROVED: ${a.decision} ${a.key}`);
  lines.push(...report.after);
  if (terminal) lines.push(resultLine(report.status, report.run === null ? '-' : report.runDir));
  return lines.map(oneLine);
}

export function resultLine(status: TerminalStatus, runDir: string): string {
  return `GSTACK_RESULT: skill=autoplan status=${status} run=${runDir === '-' ? '-' : oneLine(runDir)}`;
}
