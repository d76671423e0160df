import { LanewardError } from '../../formats/codes/error.ts';
import type { ReviewFinding } from '../../formats/review/finding.ts';
import type { BoundBlob, JournalEvent, PhaseTiming, RunRecord } from '../../formats/review/run-record.ts';
import { transact, type Store } from '../store/store.ts';
import { checkpointAfter } from './checkpoint.ts';
import { transition, type Command } from './core/machine.ts';
import { describeRun } from './describe.ts';
import { emptyReport, terminalStatus, type PlanReport } from './report.ts';
import { syncRunFiles } from './files/run-files.ts';
import type { PlanEnv } from './settings.ts';

/** What a command writes besides the record and its events: the result it binds. */
export interface Bound {
  readonly attempt: string;
  readonly blob: BoundBlob;
}

/**
 * Runs one command through the machine inside one write transaction on the run's record:
 * the events, the bound blob, the phase timings and the new record commit together, or
 * nothing does. Returns the committed record (the one read, when nothing changed).
 */
export async function commit(store: Store, runId: string, commands: Command | readonly Command[], report: PlanReport, bound?: Bound): Promise<RunRecord> {
  const now = new Date().toISOString();
  const list = Array.isArray(commands) ? (commands as readonly Command[]) : [commands as Command];
  return transact(store, 'runs', runId, (read) => {
    if (read === undefined && list[0]?.type !== 'start') throw new LanewardError('RUN_NOT_INITIALIZED', `run ${runId} vanished from ${store.root}`);
    const events: JournalEvent[] = [];
    // The findings this command binds are not in the store until it commits.
    const findingsOf = (id: string): readonly ReviewFinding[] => (id === bound?.attempt ? bound.blob.findings : store.blobs.get([runId, id])?.findings ?? []);
    // Several commands in one transaction (a supervision's outcome with the voice's end):
    // they commit together or not at all, in one flush.
    let current = read;
    let changed = false;
    const history: { key: [string, string]; value: PhaseTiming }[] = [];
    for (const command of list) {
      const done = transition(current, command, { now, events, report, findingsOf });
      current = done.record;
      changed ||= done.changed;
      history.push(...done.history);
    }
    if (!changed || current === undefined) return { change: null, result: current! };
    const blobs = bound === undefined ? [] : [{ key: [runId, bound.attempt] as [string, string], value: bound.blob }];
    return { change: { record: current, events, blobs, history }, result: current };
  });
}

/** How a command ends: whether its report shows what is open, and what it writes besides the derived files. */
export interface Settle {
  readonly open: boolean;
  /** false: the files were written already (an export). */
  readonly files?: boolean;
  /** A file of the command's own, written after the derived files and before the checkpoint. */
  readonly alsoWrite?: (record: RunRecord, report: PlanReport) => void;
}

/**
 * The tail every command on a run shares once its change committed: the files the record
 * implies, a checkpoint when they are on, and what the run waits for now.
 */
export async function settleCommand(located: { store: Store; runDir: string }, record: RunRecord, planEnv: PlanEnv, report: PlanReport, show: Settle): Promise<PlanReport> {
  if (show.files !== false) await syncRunFiles(located.store, record, located.runDir);
  show.alsoWrite?.(record, report);
  checkpointAfter(located.store, record, located.runDir, planEnv.settings.checkpointDir, report.after);
  describeRun(record, located.runDir, report, { open: show.open });
  report.status = terminalStatus(record.state);
  return report;
}

/** A command on a run that exists: commit the machine's transition, then settle. */
export async function runCommand(
  located: { store: Store; runDir: string; record: RunRecord },
  planEnv: PlanEnv,
  command: Command | readonly Command[],
  show: Settle,
  bound?: Bound,
): Promise<{ report: PlanReport; record: RunRecord }> {
  const report = emptyReport(located.runDir, located.record.run);
  const record = await commit(located.store, located.record.run, command, report, bound);
  return { report: await settleCommand(located, record, planEnv, report, show), record };
}
