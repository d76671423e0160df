import { oneLine } from '../../formats/text/one-line.ts';
import { spendLine } from './core/spend.ts';
import type { PlanReport, TerminalStatus } from './core/report.ts';

export { emptyReport, terminalStatus, type PlanReport, type TerminalStatus } from './core/report.ts';

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
