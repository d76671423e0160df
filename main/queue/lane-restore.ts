import { join } from 'node:path';
import type { LaneProgress } from '../../formats/crew/record.ts';
import type { RunRecord } from '../../formats/review/run-record.ts';
import type { ChildRecord } from '../../formats/supervision/child-record.ts';
import { syncRunFiles } from '../plan/files/run-files.ts';
import { publishBinding } from '../plan/run-binding.ts';
import { writeTransaction, type Store } from '../store/store.ts';
import type { MirroredRecord } from './lane-mirror.ts';

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
        const qa = place(record.value) as { observer?: { trust: string } };
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
  }
  return true;
}
