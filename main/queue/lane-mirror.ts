import type Redis from 'ioredis';
import { LanewardError } from '../../formats/codes/error.ts';
import { crewQaLaneId } from '../../formats/crew/qa-id.ts';
import { readBinding } from '../plan/index.ts';
import { whileOutOfMemory } from './connection.ts';
import { cbor, copiedKey, fencedAppend, laneStreamKey, streamTop, type MirroredDb } from './lane-stream.ts';
import { compareIds } from './mirror-copy.ts';
import { COORDINATOR_POLL_MAX_MS, CoordinatorWait, coordinatorSilent, type CoordinatorWord } from './coordinator-wait.ts';
import type { Store } from '../store/store.ts';

/** How often a flush that found its job without a holder asks again. */
const VACANT_POLL_MS = 200;

/** The error a mirror throws once its lane's stream moved on past what this worker holds. */
const BEHIND = new WeakSet<Error>();

/** Whether `error` says the lane's stream holds another worker's history past this worker's (its run here is behind). */
export function isBehind(error: unknown): boolean {
  return error instanceof Error && BEHIND.has(error);
}

/**
 * A lane's state on this worker, mirrored to its Redis stream: every journal record of its
 * review run and its QA lane, and each new version of its progress, run record, QA record
 * and bound results, as CBOR, in commit order. `flush` sends what changed since the last
 * flush; a worker calls it before any child of the lane starts, so an attempt journaled
 * as dispatched is in Redis before its provider can run. That flush is durable: it returns
 * only once the lane's coordinator says its own store holds the stream that far, so what a
 * Redis that loses its data puts back from that copy always holds every dispatch whose
 * child started (a dispatch Redis alone held would be lost with it, and the worker that
 * resumes the lane from the copy would start the attempt again).
 */
export class LaneMirror {
  private readonly sent = new Map<string, Buffer>();
  private readonly blobsSent = new Set<string>();
  private journalSeq = 0;
  private laneSeq = 0;
  private run: string | null = null;
  private chain: Promise<void> = Promise.resolve();

  private token: string;
  /** The stream's newest entry as this worker left it: its own last append, or where the stream stood when the lane started here. */
  private position: string;
  /** Appends under way (their reply moves `position`). */
  private evals = 0;
  /** When a durable flush first waited for the copy after its worker began to stop (shared by every flush's wait). */
  private readonly stopClock: { at?: number } = {};
  /** Set once the lane was found taken (another worker holds its job, or its stream moved on past this worker's history, or its job came back to none), or its worker stopped while it waited for its coordinator: nothing more is written, ever. */
  private lost: Error | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly store: Store,
    private readonly lane: {
      readonly crew: string;
      readonly id: string;
      readonly lockKey: string;
      readonly token: string;
      /** The stream's newest id when the lane's state here was taken from it, or last matched it ('0-0': none). */
      readonly after: string;
      readonly vacantMs?: number;
      readonly ours?: (token: string) => boolean;
      readonly onVacant?: () => void;
      /** Told the stream's newest id after each append this worker made. */
      readonly onAppended?: (top: string) => void;
      /** Told once the lane's state here is found behind its stream. */
      readonly onBehind?: () => void;
      /** The worker's stop: a durable flush still waiting for the coordinator's copy then gives up, after a grace. */
      readonly stopping?: AbortSignal;
      /** The coordinator's next word that it copied more (see CopiedSignal); without it a durable flush asks on a timer. */
      readonly nextCopied?: (ms: number) => CoordinatorWord;
      /** Told once a durable flush has waited COORDINATOR_NOTICE_MS for the coordinator's copy. */
      readonly onCoordinatorWait?: () => void;
    },
  ) {
    this.token = lane.token;
    this.position = lane.after;
  }

  /**
   * The job came back to this worker under a new lock: what follows is written under it.
   * False when the lane's run here was lost (taken, or behind its stream: another worker
   * ran it since, unnoticed here): that run stops, and the lane starts again here.
   */
  async retoken(token: string): Promise<boolean> {
    if (this.lost !== undefined) return false;
    this.token = token;
    // A run idle in a long child would find it only at its next flush: looked at now. While
    // an append of its own is under way the fence decides instead (its reply moves the position).
    // A look that fails leaves it to the fence too.
    if (this.evals === 0) {
      const before = this.position;
      const top = await streamTop(this.redis, this.lane.crew, this.lane.id).catch(() => null);
      if (top !== null && this.evals === 0 && this.position === before && compareIds(top, before) > 0) this.fallBehind(top);
    }
    return this.lost === undefined;
  }

  /**
   * Sends what changed; rejects with LANE_TAKEN once the job's lock is another worker's, or
   * its stream another's history. `durable`: returns once the coordinator's copy holds all
   * this worker sent; rejects COORDINATOR_SILENT (see isCoordinatorSilent) when the worker stops
   * first, what it sent being in the stream all the same. Flushes run one after another.
   */
  flush(durable = false): Promise<void> {
    const next = this.chain.then(() => this.send(durable));
    this.chain = next.catch(() => undefined);
    return next;
  }

  private fallBehind(top: string): Error {
    if (this.lost === undefined) {
      const error = new LanewardError('LANE_TAKEN', `lane ${this.lane.id} of crew ${this.lane.crew}: its stream moved on to ${top} past ${this.position}, where this worker left it (another worker ran the lane since): this one stops it and writes nothing more`);
      BEHIND.add(error);
      this.lost = error;
      this.lane.onBehind?.();
    }
    return this.lost;
  }

  /** Forgets what was sent: the stream lost entries of this worker's (Redis lost data and got back less): all of it goes again. */
  private resend(top: string): void {
    this.sent.clear();
    this.blobsSent.clear();
    this.journalSeq = 0;
    this.laneSeq = 0;
    this.position = top;
  }

  private async send(durable: boolean): Promise<void> {
    if (this.lost !== undefined) throw this.lost;
    const args: (string | Buffer)[] = [];
    // What this flush sends is marked sent only once Redis took it: a flush that failed
    // leaves the next one to send it all again.
    const versions = new Map<string, Buffer>();
    const blobs: string[] = [];
    let journalSeq = this.journalSeq;
    let laneSeq = this.laneSeq;
    /** An appended record (journal entries, bound results): sent once, by position, never compared. */
    const append = (db: MirroredDb, key: unknown, value: unknown) => void args.push(db, cbor.encode(key), cbor.encode(value));
    /** A record that changes in place (progress, run record, QA record): sent when its bytes differ from the last sent. */
    const version = (db: MirroredDb, key: unknown, value: unknown) => {
      const keyBytes = cbor.encode(key);
      const valueBytes = cbor.encode(value);
      const id = `${db} ${keyBytes.toString('base64')}`;
      if (this.sent.get(id)?.equals(valueBytes) === true) return;
      versions.set(id, valueBytes);
      args.push(db, keyBytes, valueBytes);
    };
    const { crew, id } = this.lane;
    const progress = this.store.crewLanes.get([crew, id]);
    if (progress !== undefined) {
      if (this.run === null) {
        try {
          this.run = readBinding(progress.runDir)?.run ?? null;
        } catch {
          this.run = null;
        }
      }
      if (this.run !== null) {
        for (const { key, value } of this.store.journal.getRange({ start: [this.run, journalSeq], end: [this.run, Number.MAX_SAFE_INTEGER] })) {
          append('journal', key, value);
          journalSeq = (key as [string, number])[1] + 1;
        }
        // A bound result never changes: each is encoded and sent once, not at every flush.
        // Keys first: a result already sent is not read and decoded again at every flush.
        for (const key of this.store.blobs.getKeys({ start: [this.run, ''], end: [this.run, '\uffff'] })) {
          const attempt = (key as [string, string])[1];
          if (this.blobsSent.has(attempt)) continue;
          const value = this.store.blobs.get(key as [string, string]);
          if (value === undefined) continue;
          blobs.push(attempt);
          append('blobs', key, value);
        }
        const record = this.store.runs.get(this.run);
        if (record !== undefined) version('runs', this.run, record);
      }
    }
    const qa = crewQaLaneId(crew, id);
    for (const { key, value } of this.store.laneJournal.getRange({ start: [qa, laneSeq], end: [qa, Number.MAX_SAFE_INTEGER] })) {
      append('laneJournal', key, value);
      laneSeq = (key as [string, number])[1] + 1;
    }
    const qaRecord = this.store.lanes.get(qa);
    if (qaRecord !== undefined) version('lanes', qa, qaRecord);
    // The progress last: a reader that has it has everything it points to.
    if (progress !== undefined) version('crewLanes', [crew, id], progress);
    if (args.length === 0 && !durable) return;
    // A job without a holder is waited for (nothing of the lane starts meanwhile): it comes
    // back to this worker (retoken) or another takes it (LANE_TAKEN).
    // So is one this worker holds under a token the lane has not been handed yet (the job
    // came back here and its new processor is about to retoken the lane).
    // The wait counts from when Redis takes writes again: a lock that lapsed while Redis
    // refused every write (its maxmemory) was not taken, and the stalled check has yet to
    // put the job back; and from the last time the lock was found this worker's.
    let vacantUntil = performance.now() + (this.lane.vacantMs ?? 0);
    const ours = this.lane.ours ?? (() => false);
    // BullMQ's job hash is its lock key without the ':lock'.
    const keys = { lock: this.lane.lockKey, stream: laneStreamKey(crew, id), job: this.lane.lockKey.replace(/:lock$/, ''), copied: copiedKey(qa) };
    const wait = new CoordinatorWait({ stopping: this.lane.stopping, onWaiting: this.lane.onCoordinatorWait, stopClock: this.stopClock, silent: () => coordinatorSilent(id, crew, `copied its records up to ${this.position}`) });
    for (;;) {
      if (this.lost !== undefined) throw this.lost;
      const token = this.token;
      const position = this.position;
      // A Redis at its maxmemory is waited out: the lane starts nothing meanwhile.
      let refused = false;
      this.evals += 1;
      let reply: Awaited<ReturnType<typeof fencedAppend>>;
      // Listened for before the ask: word of a copy made while it is answered counts.
      const word = durable ? this.lane.nextCopied?.(COORDINATOR_POLL_MAX_MS) : undefined;
      try {
        reply = await whileOutOfMemory(() => fencedAppend(this.redis, keys, token, position, args), undefined, () => (refused = true));
      } catch (error) {
        word?.stop();
        throw error;
      } finally {
        this.evals -= 1;
      }
      if (refused) vacantUntil = performance.now() + (this.lane.vacantMs ?? 0);
      const [status, value] = reply;
      if (status === 'ok') {
        if (args.length > 0) {
          this.position = value;
          this.lane.onAppended?.(value);
          this.journalSeq = journalSeq;
          this.laneSeq = laneSeq;
          for (const attempt of blobs) this.blobsSent.add(attempt);
          for (const [key, bytes] of versions) this.sent.set(key, bytes);
          // Sent: what follows only asks again (the same fence, nothing written).
          args.length = 0;
        }
        if (!durable || compareIds(reply[2], this.position) >= 0) {
          word?.stop();
          return;
        }
        // The coordinator has not copied it yet: asked again soon, the lock and the stream
        // checked each time (a Redis that lost its data meanwhile answers 'vacant' or 'moved').
        vacantUntil = performance.now() + (this.lane.vacantMs ?? 0);
        // Given up once, every later durable flush gives up at once (what it sent is in the stream).
        await wait.pause(word);
        continue;
      }
      word?.stop();
      if (status === 'moved') {
        // Past this worker's history: another worker's. Short of it: Redis lost entries
        // (a flush, a restart without them) and got back only part, of this worker's own.
        if (compareIds(value, position) > 0) throw this.fallBehind(value);
        this.resend(value);
        return this.send(durable);
      }
      // Handed a new token meanwhile: tried again with it at once.
      if (this.token !== token) continue;
      const between = status === 'vacant' || ours(value);
      // Lost for good: a job that comes back here later starts the lane again, never this run.
      if (!between || performance.now() >= vacantUntil) throw (this.lost = new LanewardError('LANE_TAKEN', `lane ${id} of crew ${crew} is held by another worker now: this one stops it and writes nothing more`));
      this.lane.onVacant?.();
      if (this.token === token) await new Promise((resolve) => setTimeout(resolve, VACANT_POLL_MS));
    }
  }
}
