import type { RunState, SpendRecord } from '../../../formats/review/run-record.ts';
import type { ReportFact } from './report-facts.ts';

export type { ReportFact } from './report-facts.ts';

export type TerminalStatus = 'awaiting_result' | 'gate_pending' | 'complete' | 'reviewed' | 'incomplete' | 'interrupted' | 'refused';

export interface AttemptFact { id: string; phase: string; voice: string; prompt: string; result: string; family: string }
export interface BoundFact { attempt: string; phase: string; voice: string; model: string; findings: number; sha256: string; again: boolean }
export interface ClosedFact { phase: string; confirmed: number; unverified: number; disagree: number; new: number; native_only: number; coverage: string }
export interface UnknownFact { attempt: string; phase: string; voice: string }
export interface GateFact { rev: number; items: number; pending: number; file: string; recRev: number; recHash: string }

/**
 * What one plan command found and did, as data. The CLI prints it as lines in the
 * contract's order, or as one JSON object with --json; nothing else decides wording
 * (main/cli/plan-lines.ts words every fact).
 */
export interface PlanReport {
  run: string | null;
  runDir: string;
  status: TerminalStatus;
  stateRoot?: { path: string; durable: boolean };
  /** RUN, PHASE_STATUS, VOICE_FAILED, RESTORED, SESSION_KIND, ESTIMATE, PLAN_CHANGED: before PHASE. */
  notes: ReportFact[];
  phase?: { id: string; snapshot: string; order: string[] };
  /** SCOPE and SCOPE_PIN, printed right after PHASE on a run's first next. */
  scope: ReportFact[];
  attempts: AttemptFact[];
  spend?: SpendRecord;
  bound: BoundFact[];
  closed: ClosedFact[];
  unknown: UnknownFact[];
  gate?: GateFact;
  /** CARRIED, CARRY: no and CARRIED_UNDER_DO_IT: after the GATE line, before APPROVED. */
  carry: ReportFact[];
  applied: { decision: string; title: string; chosen: string }[];
  approved: { decision: string; key: string }[];
  /** What the command did last (VOICE, CYCLE, REVISED, EXPORTED, CHECKPOINT, ...): the report's end. */
  after: ReportFact[];
}

export function emptyReport(runDir: string, run: string | null): PlanReport {
  return { run, runDir, status: 'awaiting_result', notes: [], scope: [], carry: [], attempts: [], bound: [], closed: [], unknown: [], applied: [], approved: [], after: [] };
}

export function terminalStatus(state: RunState): TerminalStatus {
  return state === 'phase_closed' ? 'awaiting_result' : state;
}

