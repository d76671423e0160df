import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { Encoder } from 'cbor-x';
import { createRequire } from 'node:module';
import type { Database } from 'lmdb';
import { LanewardError, oneLineMessage } from '../../formats/codes/error.ts';
import { makeDirs } from '../fs/make-dirs.ts';
import { checkEnvironment } from './environment-check.ts';
import { checkedCbor, type DatabaseName } from './record-check.ts';
import { assertGuardedLmdb } from './lmdb-guard.ts';
import type { CrewDriver, CrewRunRecord, LaneProgress } from '../../formats/crew/record.ts';
import type { ControlRecord } from '../../formats/crew/control.ts';
import type { QaEvent } from '../../formats/qa/events.ts';
import type { LaneRecord } from '../../formats/qa/record.ts';
import type { BoundBlob, JournalEvent, PhaseTiming, RunRecord } from '../../formats/review/run-record.ts';

export type { PhaseTiming };

/**
 * One LMDB environment per state root, opened once per process. Values are CBOR records
 * (cbor-x through lmdb's `cbor` encoding): each value carries its own record definitions,
 * so repeated shapes within a record encode as small references. Structures are not
 * shared through the store: a process holding the store open that met a record naming a
 * structure another process added would reload the structures in the middle of decoding,
 * and cbor-x then reads the rest of the record through the structures' buffer (a throw,
 * or wrong data). Self-contained values cannot go stale. Named databases:
 *   runs     run id -> RunRecord
 *   journal  [run id, seq] -> JournalEvent
 *   blobs    [run id, attempt id] -> BoundBlob (the bytes a submit bound)
 *   history  [phase, run id] -> PhaseTiming (cross-run timing, for estimates)
 *   crew-lanes [crew, lane] -> LaneProgress (a crew's lanes, for resume)
 *   crew-drivers crew -> CrewDriver (the process running the crew now)
 *   crew-runs crew -> CrewRunRecord (the crew's latest run: when, and how it ended)
 *   lanes    lane id -> LaneRecord (a lane's QA state machine)
 *   laneJournal [lane id, seq] -> QaEvent (every QA event of the lane, in order)
 *   queue-mirror [lane QA id, n] -> MirrorCopy (a queued crew's coordinator: its lanes' mirrored records, to put back in a Redis that lost them)
 *   crew-control [crew, seq] -> ControlRecord (operators' requests to a running crew: retry, cancel, stop, each taken once)
 */
export interface Store {
  readonly root: string;
  readonly runs: Database<RunRecord, string>;
  readonly journal: Database<JournalEvent, [string, number]>;
  readonly blobs: Database<BoundBlob, [string, string]>;
  readonly history: Database<PhaseTiming, [string, string]>;
  readonly crewLanes: Database<LaneProgress, [string, string]>;
  readonly crewDrivers: Database<CrewDriver, string>;
  /** Absent from a root no crew wrote to, when opened read-only: read it through {@link readCrewRun}. */
  readonly crewRuns: Database<CrewRunRecord, string>;
  readonly lanes: Database<LaneRecord, string>;
  readonly laneJournal: Database<QaEvent, [string, number]>;
  /** Absent from a root no queued crew wrote to, when opened read-only. */
  readonly queueMirror: Database<MirrorCopy, [string, number]>;
  /** Absent from a root no operator request reached, when opened read-only. */
  readonly crewControl: Database<ControlRecord, [string, number]>;
  /** Transactions of one event-loop turn share a commit (a long-lived coordinator). */
  readonly batched: boolean;
}

/** One entry of a lane's Redis stream as its coordinator copied it: its id there and its fields' bytes. */
export interface MirrorCopy {
  readonly id: string;
  readonly db: string;
  readonly key: Uint8Array;
  readonly value: Uint8Array;
}

const opened = new Map<string, Store>();
// The initial map: address space only (the file is sparse). lmdb grows the map past it
// when a write finds it full, so this keeps resizes rare; it is not a limit.
const MAP_BYTES = 8 * 1024 ** 3;
// A dead process's reader slot pins its snapshot: pages freed after it cannot be reused
// and the file grows. lmdb clears dead slots when an environment opens and, in a process
// that stays up, only every ten minutes; a crew or a long plan run checks this often.
const READER_CHECK_MS = 15_000;
// lmdb builds one cbor-x Encoder per database from this.
const CBOR = { Encoder };
// Loaded on the first open, not with the bundle: the commands that need no store (deadline,
// lease, gate, one artifact validate) must not pay for the native addon, nor its descriptors.
const load = createRequire(import.meta.url);

/**
 * lmdb-js, loaded at the first open. It requires msgpackr whatever the encoder (ours is
 * CBOR), and msgpackr loads its native string extractor at once unless told not to: an
 * addon no laneward process ever calls (about 2 ms of a `plan status`'s CPU here, the mean
 * of 60 alternating starts). Told so only for that load: a child laneward starts later
 * inherits nothing of it.
 */
function loadLmdb(): typeof import('lmdb') {
  const key = 'MSGPACKR_NATIVE_ACCELERATION_DISABLED';
  const was = process.env[key];
  process.env[key] = 'true';
  try {
    return load('lmdb') as typeof import('lmdb');
  } finally {
    if (was === undefined) delete process.env[key];
    else process.env[key] = was;
  }
}

/**
 * `batched`: one process driving many runs at once (the first open decides); a command
 * that changes one run and exits commits synchronously, with no write thread to outlive.
 */
export function openStore(root: string, options: { batched?: boolean; readOnly?: boolean } = {}): Store {
  const dir = resolve(root);
  const known = opened.get(dir);
  if (known !== undefined) return known;
  try {
    // readOnly: a reader of a root that exists (plan status on a read-only file system).
    // makeDirs, not a recursive mkdir: that one spins for ever where mkdir cannot succeed (/proc).
    assertGuardedLmdb(load);
    if (options.readOnly !== true) makeDirs(dir, { code: 'STATE_UNAVAILABLE' });
    const store = openEnvironment(dir, options);
    opened.set(dir, store);
    return store;
  } catch (error) {
    if (error instanceof LanewardError) throw error;
    throw new LanewardError('STATE_UNAVAILABLE', `${dir}: ${oneLineMessage(error)}`, { path: dir, cause: error });
  }
}

/** The named databases a laneward environment holds, and nothing else. */
const DATABASES = new Set(['runs', 'journal', 'blobs', 'history', 'crew-lanes', 'crew-drivers', 'crew-runs', 'lanes', 'laneJournal', 'queue-mirror', 'crew-control']);

function openEnvironment(dir: string, options: { batched?: boolean; readOnly?: boolean }): Store {
  const { open } = loadLmdb();
  const path = realpathSync(dir);
  // Before lmdb maps anything: a file it would fault on is refused here, on one line.
  checkEnvironment(path, { readOnly: options.readOnly === true });
  // noSubdir false: lmdb takes a path with an extension (a root named crew.v2) for a file.
  const env = open({ path, noSubdir: false, maxDbs: 16, encoder: CBOR, mapSize: MAP_BYTES, ...(options.readOnly === true ? { readOnly: true } : {}) });
  // Another program's LMDB environment is not ours to add databases to: its main database
  // names only laneward's databases (none in a new one).
  const foreign = [...env.getKeys({ limit: 64 })].filter((key) => typeof key !== 'string' || !DATABASES.has(key));
  if (foreign.length > 0) {
    void env.close();
    throw new LanewardError('STATE_CORRUPT', `the state root is an LMDB environment that is not laneward's (its main database holds ${JSON.stringify(String(foreign[0]).slice(0, 64))}${foreign.length > 1 ? ` and ${foreign.length - 1} more` : ''})`, { path: dir });
  }
  const db = <V, K extends string | [string, number] | [string, string]>(name: DatabaseName) =>
    env.openDB<V, K>({ name, encoder: checkedCbor(dir, name) } as { name: string });
  const store: Store = {
    root: dir,
    runs: db<RunRecord, string>('runs'),
    journal: db<JournalEvent, [string, number]>('journal'),
    blobs: db<BoundBlob, [string, string]>('blobs'),
    history: db<PhaseTiming, [string, string]>('history'),
    crewLanes: db<LaneProgress, [string, string]>('crew-lanes'),
    crewDrivers: db<CrewDriver, string>('crew-drivers'),
    crewRuns: db<CrewRunRecord, string>('crew-runs'),
    lanes: db<LaneRecord, string>('lanes'),
    laneJournal: db<QaEvent, [string, number]>('laneJournal'),
    queueMirror: db<MirrorCopy, [string, number]>('queue-mirror'),
    crewControl: db<ControlRecord, [string, number]>('crew-control'),
    batched: options.batched === true,
  };
  // A reader cannot create a named database: on a root whose writer has not created them
  // all yet (a crew that is starting), lmdb leaves them undefined. Refused, not cached, so
  // the reader's next open finds them.
  // crew-runs came later than the rest: a root an earlier laneward wrote lacks it, and is
  // read without it (readCrewRun answers undefined). queue-mirror and crew-control came later still.
  const missing = Object.entries(store)
    .filter(([name, value]) => value === undefined && name !== 'crewRuns' && name !== 'queueMirror' && name !== 'crewControl')
    .map(([name]) => name);
  if (missing.length > 0) {
    void env.close();
    throw new LanewardError('STATE_UNAVAILABLE', `${dir}: the state root has no ${missing.join(', ')} database yet; open it again once its writer created it`, { path: dir });
  }
  // Unref'd: a command that is done exits without waiting for the next check.
  setInterval(() => {
    try {
      env.readerCheck();
    } catch {
      // A closed or failing environment shows itself on the next transaction.
    }
  }, READER_CHECK_MS).unref();
  return store;
}

/** Everything a transition wants written, applied in one write transaction. */
export interface Change {
  readonly record: RunRecord;
  readonly events: readonly JournalEvent[];
  readonly blobs?: readonly { key: [string, string]; value: BoundBlob }[];
  readonly history?: readonly { key: [string, string]; value: PhaseTiming }[];
}

/** What a lane transition wants written: the new record and the events it journals. */
export interface LaneChange {
  readonly record: LaneRecord;
  readonly events: readonly QaEvent[];
}

/**
 * The tables whose records journal their events: each record carries the next journal
 * sequence number (`seq`), its events go to `[key, seq]` in the table's journal.
 * `runs`: a review run (RunRecord; its change may also bind blobs and timing history);
 * `lanes`: a lane's QA state machine (LaneRecord).
 */
export interface JournaledTables {
  readonly runs: { readonly record: RunRecord; readonly change: Change };
  readonly lanes: { readonly record: LaneRecord; readonly change: LaneChange };
}

export type JournaledTable = keyof JournaledTables;

/** A table's record database and its journal, as the transaction writes them. */
function tableOf(store: Store, table: JournaledTable): { records: Database<{ seq: number }, string>; journal: Database<unknown, [string, number]> } {
  return table === 'runs' ? { records: store.runs, journal: store.journal } : { records: store.lanes, journal: store.laneJournal };
}

/**
 * Runs `step` inside one write transaction on the record `key` of `table`: it reads the
 * current record, decides, and returns the change (or null to write nothing) plus a
 * result. The journal events (and a run's blobs and history) and the new record commit
 * together before this resolves, so a process killed at any instant leaves the old record
 * or the new one; LMDB's writer lock serialises two processes driving one record, so the
 * second reads the first's committed record. `step` must be synchronous and free of side
 * effects: it can be thrown away with its transaction.
 */
export async function transact<N extends JournaledTable, T>(
  store: Store,
  table: N,
  key: string,
  step: (current: JournaledTables[N]['record'] | undefined) => { change: JournaledTables[N]['change'] | null; result: T },
): Promise<T> {
  const { records, journal } = tableOf(store, table);
  return writeTransaction(store, records, () => {
    const { change, result } = step(structuredClone(records.get(key)) as JournaledTables[N]['record'] | undefined);
    if (change !== null) {
      let seq = change.record.seq;
      for (const event of change.events) void journal.put([key, seq++], event);
      // Only a run's change binds blobs and history (a lane's has neither field).
      const extra = change as Partial<Pick<Change, 'blobs' | 'history'>>;
      for (const blob of extra.blobs ?? []) void store.blobs.put(blob.key, blob.value);
      for (const entry of extra.history ?? []) void store.history.put(entry.key, entry.value);
      change.record.seq = seq;
      void records.put(key, change.record);
    }
    return result;
  });
}

/** The run's journal in order. */
export function readJournal(store: Store, run: string): JournalEvent[] {
  return [...store.journal.getRange({ start: [run, 0], end: [run, Number.MAX_SAFE_INTEGER] }).map(({ value }) => value)];
}

/** How often a write transaction whose begin failed is begun again before the command fails. */
const BEGIN_TRIES = 4;

/**
 * Runs `apply` in one write transaction: synchronously committed, or in the batched
 * store's next shared commit. A transaction whose begin failed (the writer lock or the
 * environment refused it) never ran `apply` and wrote nothing, so it is begun again a few
 * times, a little later each time; any other failure is the command's, as
 * STATE_UNAVAILABLE naming the root, with the cause's own line breaks folded into the one
 * error line.
 */
export async function writeTransaction<T>(store: Store, db: Pick<Database<unknown, string>, 'transaction' | 'transactionSync'>, apply: () => T): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    let began = false;
    const run = () => {
      began = true;
      return apply();
    };
    try {
      return store.batched ? await db.transaction(run) : db.transactionSync(run);
    } catch (error) {
      if (error instanceof LanewardError) throw error;
      if (!began && attempt < BEGIN_TRIES) {
        await new Promise((resolve) => setTimeout(resolve, 5 * attempt));
        continue;
      }
      throw new LanewardError('STATE_UNAVAILABLE', `${store.root}: ${oneLineMessage(error)}`, { path: store.root, cause: error });
    }
  }
}

/** The crew's latest run, or undefined (none recorded, or a read-only root that never had one). */
export function readCrewRun(store: Store, crew: string): CrewRunRecord | undefined {
  try {
    return store.crewRuns.get(crew);
  } catch {
    // lmdb opens a database a read-only root lacks as a handle that fails on use.
    return undefined;
  }
}

/** The lane's QA journal in order. */
export function readLaneJournal(store: Store, lane: string): QaEvent[] {
  return [...store.laneJournal.getRange({ start: [lane, 0], end: [lane, Number.MAX_SAFE_INTEGER] }).map(({ value }) => value)];
}
