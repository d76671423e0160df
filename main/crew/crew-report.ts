import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { LaneProgress } from '../../formats/crew/record.ts';
import type { LaneCheckEvent } from '../../formats/crew/lane-check.ts';
import type { LaneOrderEvent } from '../../formats/crew/lane-order.ts';
import { LanewardError } from '../../formats/codes/error.ts';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import { percentile } from '../console/view-state.ts';
import type { DispatchStats } from '../dispatch/dispatcher.ts';
import type { CrewTally } from './coordinator.ts';
import { laneObject, type LaneFacts } from './lane-line.ts';

/** A report path that cannot be written is refused before the crew runs, not after its work. */
export function checkReportPath(file: string): void {
  if (statSync(file, { throwIfNoEntry: false })?.isDirectory() === true) throw new LanewardError('USAGE', `--report ${file} is a directory`, { path: file });
  if (statSync(dirname(file), { throwIfNoEntry: false })?.isDirectory() !== true) throw new LanewardError('USAGE', `--report ${file}: its directory does not exist`, { path: file });
}

/** What a crew run's --report says, however its lanes ran. */
export interface CrewReportFacts {
  readonly crew: string;
  readonly file: string;
  readonly root: string;
  /** What the runner adds after the state root (a queued crew's queue URL). */
  readonly where: Readonly<Record<string, unknown>>;
  readonly startedAt: string;
  readonly durationS: number;
  readonly stoppedBy: string | null;
  readonly counts: CrewTally;
  readonly attempts: number;
  readonly stats: DispatchStats;
  readonly lanes: readonly LaneProgress[];
  /** Each open lane's check against the others (a crew with a workspace); a lane with none has no branch to land. */
  readonly laneChecks?: readonly LaneCheckEvent[];
  /** `"overlap": "order"`: each lane that ran after earlier lanes whose plans share its files. */
  readonly laneOrders?: readonly LaneOrderEvent[];
  readonly laneFacts: (progress: LaneProgress) => LaneFacts;
  /** Providers that rate limited the crew, and until when their latest pause ran. */
  readonly providers: readonly unknown[];
}

/** Writes the --report file at `path` (temp + rename: a kill leaves the old one or the new). */
export function writeCrewReport(path: string, f: CrewReportFacts): void {
  const report = {
    schema_version: 1,
    crew: f.crew,
    file: f.file,
    state_root: f.root,
    ...f.where,
    started_at: f.startedAt,
    ended_at: new Date().toISOString(),
    duration_s: Number(f.durationS.toFixed(3)),
    stopped_by: f.stoppedBy,
    summary: { ...f.counts, attempts: f.attempts },
    // calls: the supervised calls this run started (reviewers, observers, agent turns); the summary's attempts add up each lane's across runs.
    stats: { calls: f.stats.started, marks: f.stats.marks, renewal_p99_ms: percentile(f.stats.renewalLatencyMs, 0.99) },
    lanes: f.lanes.map((progress) => ({ ...laneObject(progress, f.laneFacts(progress)), ...laneCheckField(f.laneChecks, progress.lane), ...laneOrderField(f.laneOrders, progress.lane) })),
    providers: f.providers,
  };
  writeFileAtomic(path, `${JSON.stringify(report, null, 2)}\n`, 0o644, true);
}

/** `lane_check` on a report's lane: clear or overlap, the shared files and the other lanes. */
function laneCheckField(checks: readonly LaneCheckEvent[] | undefined, lane: string): Record<string, unknown> {
  const check = checks?.find((c) => c.lane === lane);
  return check === undefined ? {} : { lane_check: { status: check.status, files: check.files, with: check.with, planned: check.planned, changed: check.changed } };
}

/** `lane_order` on a report's lane of an ordered crew: the earlier lanes it ran after and the files they share. */
function laneOrderField(orders: readonly LaneOrderEvent[] | undefined, lane: string): Record<string, unknown> {
  const order = orders?.find((o) => o.lane === lane);
  return order === undefined ? {} : { lane_order: { after: order.after, files: order.files } };
}

/** The --json summary object, the crew's last line. */
export function summaryObject(counts: CrewTally, attempts: number, durationS: number, stoppedBy: string | null, answerCommand: string | null = null): string {
  // `waiting` only when lanes wait for their owner, as on the CREW_SUMMARY line: a crew that answers its own gates prints what it always did.
  const { waiting, ...rest } = counts;
  return JSON.stringify({ summary: { ...rest, ...(waiting > 0 ? { waiting } : {}), attempts, duration_s: Number(durationS.toFixed(3)), stopped_by: stoppedBy, ...(answerCommand === null ? {} : { answer_command: answerCommand }) } });
}
