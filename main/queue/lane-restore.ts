import { join } from 'node:path';
import type { LaneProgress } from '../../formats/crew/record.ts';
import type { LaneRecord } from '../../formats/qa/record.ts';
import type { RunRecord } from '../../formats/review/run-record.ts';
import type { ChildRecord } from '../../formats/supervision/child-record.ts';
import { crewQaLaneId } from '../../formats/crew/qa-id.ts';
import { exportRun } from '../plan/export.ts';
import { syncRunFiles } from '../plan/files/run-files.ts';
import { emptyReport } from '../plan/report.ts';
import { publishBinding, readBinding } from '../plan/run-binding.ts';
import { processStart } from '../process/process-alive.ts';
import { writeTransaction, type Store } from '../store/store.ts';
import type { MirroredRecord } from './lane-stream.ts';

/**
 * The child a lost machine ran, as this machine records it: a pid above any kernel's
 * pid_max, so no process here is ever taken for it, signalled or adopted. A later driver
 * finds it gone: what it started is settled from what it left (nothing, here), never run
 * again.
 */
export function foreignChild(at: string): ChildRecord {
  const pid = 4_194_305;
  return { pid, pgid: pid, ticks: -1, at, mode: 'total_deadline', deadline_at: null, reads_output: true };
}

/** A process that drives nothing here: the lost machine's, or this one's whose run of the lane ended. */
const FOREIGN_HOLDER = { pid: foreignChild('').pid, ticks: '-1' } as const;

/** The QA record's reservations made foreign: their calls are settled as orphans', never taken for a live process's. */
function foreignReservations<T extends { reserved?: LaneRecord['reserved'] }>(qa: T, owned: (owner: { pid: number; ticks: string }) => boolean, at: string, childToo: boolean): T {
  if (qa.reserved === undefined) return qa;
  return { ...qa, reserved: qa.reserved.map((r) => (!owned(r.owner) ? r : { ...r, owner: FOREIGN_HOLDER, ...(childToo && r.child !== undefined ? { child: foreignChild(at) } : {}) })) };
}

/** Replaces `from` (a directory) at the start of every string inside `value` with `to`. */
function moved<T>(value: T, from: string, to: string): T {
  if (typeof value === 'string') return (value === from || value.startsWith(`${from}/`) ? `${to}${value.slice(from.length)}` : value) as T;
  if (Array.isArray(value)) return value.map((item) => moved(item, from, to)) as T;
  if (value instanceof Uint8Array || value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, moved(v, from, to)])) as T;
}

/**
 * Writes a lane a lost worker mirrored into this worker's store, in one transaction, as
 * this machine's: its paths moved from the lost worker's lane directory to `dir`, the
 * observer's trust key this worker's own, and every child the lost machine had started
 * and not seen end made foreign (see {@link foreignChild}), so the lane resumes exactly as
 * a crew started again resumes it: an attempt journaled as dispatched with no outcome ends
 * EXECUTION_UNKNOWN, a dispatched turn is a lost turn, and nothing is started twice. Its
 * run directory gets its binding. False when the stream holds no progress of the lane.
 */
export async function restoreLane(store: Store, records: readonly MirroredRecord[], target: { readonly lane: string; readonly dir: string; readonly root: string; readonly trust: string; readonly replace?: boolean }): Promise<boolean> {
  const last = new Map<string, MirroredRecord>();
  const journal: MirroredRecord[] = [];
  for (const record of records) {
    if (record.db === 'journal' || record.db === 'laneJournal') journal.push(record);
    else last.set(`${record.db} ${JSON.stringify(record.key)}`, record);
  }
  const progressRecord = [...last.values()].find((r) => r.db === 'crewLanes');
  if (progressRecord === undefined) return false;
  const old = progressRecord.value as LaneProgress;
  const suffix = `/runs/${target.lane}`;
  const from = old.runDir.endsWith(suffix) ? old.runDir.slice(0, -suffix.length) : old.runDir;
  const now = new Date().toISOString();
  const place = <T>(value: T): T => moved(value, from, target.dir);
  let run: string | null = null;
  await writeTransaction(store, store.crewLanes, () => {
    // `replace`: this store ran the lane until another worker took it; what it holds of
    // the lane is behind the mirror and goes first (a record only it holds would be a
    // journal out of step with the run record).
    if (target.replace === true) {
      const crewKey = progressRecord.key as [string, string];
      const runs = new Set<string>();
      for (const record of records) if (record.db === 'runs') runs.add(record.key as string);
      for (const run of runs) {
        for (const key of store.journal.getKeys({ start: [run, 0], end: [run, Number.MAX_SAFE_INTEGER] })) void store.journal.remove(key);
        for (const key of store.blobs.getKeys({ start: [run, ''], end: [run, '\uffff'] })) void store.blobs.remove(key);
        void store.runs.remove(run);
      }
      for (const record of records) {
        if (record.db !== 'lanes') continue;
        const qa = record.key as string;
        for (const key of store.laneJournal.getKeys({ start: [qa, 0], end: [qa, Number.MAX_SAFE_INTEGER] })) void store.laneJournal.remove(key);
        void store.lanes.remove(qa);
      }
      void store.crewLanes.remove(crewKey);
    }
    for (const record of journal) {
      if (record.db === 'journal') void store.journal.put(record.key as [string, number], place(record.value) as never);
      else void store.laneJournal.put(record.key as [string, number], place(record.value) as never);
    }
    for (const record of last.values()) {
      if (record.db === 'blobs') void store.blobs.put(record.key as [string, string], record.value as never);
      else if (record.db === 'runs') {
        run = record.key as string;
        const runRecord = place(record.value) as RunRecord;
        delete runRecord.driver;
        for (const attempt of Object.values(runRecord.attempts)) {
          if (attempt.state !== 'open' || attempt.dispatched_at === undefined) continue;
          attempt.child = foreignChild(now);
          attempt.dispatched_by = { pid: foreignChild(now).pid, ticks: '-1' };
        }
        void store.runs.put(run, runRecord);
      } else if (record.db === 'lanes') {
        // Its observer calls in flight ran on the lost machine: settled from what they left, as the run's attempts are.
        const qa = foreignReservations(place(record.value) as { observer?: { trust: string }; reserved?: LaneRecord['reserved'] }, () => true, now, true);
        if (qa.observer !== undefined) qa.observer = { ...qa.observer, trust: target.trust };
        void store.lanes.put(record.key as string, qa as never);
      }
    }
    const progress = place(old);
    if (progress.turnsDispatched > progress.turnsDone) progress.turnChild = foreignChild(now);
    void store.crewLanes.put(progressRecord.key as [string, string], progress);
  });
  if (run !== null) {
    const runDir = join(target.dir, 'runs', target.lane);
    await publishBinding(runDir, { run, root: target.root });
    // The files the record implies (prompts of open attempts, seals, consensus, the gate) were on the lost machine.
    const record = store.runs.get(run);
    if (record !== undefined) await syncRunFiles(store, record, runDir, 'full');
    // So was its export (run.json and the artifacts it names), which no record holds: a lane
    // that completed there and is taken up here starts nothing more, and would carry back a
    // run directory without it (ARTIFACT_MISSING at its coordinator). Written again from
    // the record, as its export wrote it, and validated (EXPORT_INVALID otherwise).
    if (record !== undefined && record.export !== null && record.export !== undefined) await exportRun({ store, runDir }, record, emptyReport(runDir, run), 'review');
  }
  return true;
}

/**
 * A lane this state root ran and takes up again in the same process, after its run here
 * ended (it was stopped: its job went to another worker, or lost its holder): what that
 * run dispatched and never saw end is no longer driven by anyone, though this process
 * still lives. Its open attempts and observer calls are handed to a holder that drives
 * nothing, so the run resumes them as orphans (a result left is bound, a child that ran
 * and left none is EXECUTION_UNKNOWN, one never spawned is dispatched), never refusing
 * them as in flight (ATTEMPT_IN_FLIGHT) under its own pid. Their child records stay:
 * those children ran on this machine.
 */
export async function releaseOwnDispatches(store: Store, crew: string, lane: string): Promise<void> {
  const self = { pid: process.pid, ticks: processStart(process.pid)?.ticks ?? '' };
  const mine = (holder: { pid: number; ticks: string } | undefined) => holder !== undefined && holder.pid === self.pid && (holder.ticks === self.ticks || holder.ticks === '');
  const progress = store.crewLanes.get([crew, lane]);
  let run: string | undefined;
  try {
    run = progress === undefined ? undefined : readBinding(progress.runDir)?.run;
  } catch {
    run = undefined;
  }
  const qaId = crewQaLaneId(crew, lane);
  await writeTransaction(store, store.runs, () => {
    const record = run === undefined ? undefined : store.runs.get(run);
    if (run !== undefined && record !== undefined && Object.values(record.attempts).some((a) => a.state === 'open' && mine(a.dispatched_by))) {
      const next = structuredClone(record);
      for (const attempt of Object.values(next.attempts)) if (attempt.state === 'open' && mine(attempt.dispatched_by)) attempt.dispatched_by = { ...FOREIGN_HOLDER };
      void store.runs.put(run, next);
    }
    const qa = store.lanes.get(qaId);
    if (qa?.reserved?.some((r) => mine(r.owner)) === true) void store.lanes.put(qaId, foreignReservations(qa, mine, '', false) as never);
  });
}
