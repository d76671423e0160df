import { Encoder } from 'cbor-x';
import type Redis from 'ioredis';
import { LanewardError } from '../../formats/codes/error.ts';
import { crewQaLaneId } from '../../formats/crew/qa-id.ts';
import { readBinding } from '../plan/index.ts';
import { whileOutOfMemory } from './connection.ts';
import { compareIds } from './mirror-copy.ts';
import type { Store } from '../store/store.ts';

// One codec for keys and values, self-contained records (no shared structures), as the store keeps them.
const cbor = new Encoder({ useRecords: false, structuredClone: false });

/** The databases a lane's state lives in, by the name its stream records carry. */
type MirroredDb = 'crewLanes' | 'runs' | 'journal' | 'blobs' | 'lanes' | 'laneJournal';

/** How often a flush that found its job without a holder asks again. */
const VACANT_POLL_MS = 200;

/** The Redis stream a lane's records are mirrored to. */
export function laneStreamKey(crew: string, lane: string): string {
  return `laneward:lane:${crewQaLaneId(crew, lane)}`;
}

// Appends the records only while the job's lock still holds this worker's token: a worker
// whose lane was taken over (its lock expired and another worker holds the job) writes
// nothing more, ever.
// Another token answers the holder's. No lock at all ('vacant') is not another worker's:
// the job is between holders (its lock lapsed while this process was paused, or Redis
// lost it and the coordinator queues it again).
// And only while the stream ends where this worker last left it (ARGV[2]): a job that came
// back to a worker whose run of the lane had not noticed another worker took it meanwhile
// would otherwise append its history, behind the other's, after the other's ('moved',
// with the stream's newest id). A lock alone cannot tell: it is this worker's again.
// Records taken under the lock are the lane progressing: the job's stall count (BullMQ's
// "stc", which it never lowers) starts again from 0, so only stalls with no progress
// between them add up to its limit. A healthy lane whose lock lapsed now and then (a
// loaded machine, a paused worker, a Redis restart) is never failed "job stalled more
// than allowable limit"; a lane that brings down every worker before it writes anything
// still is.
const FENCED_XADD = `
local holder = redis.call('GET', KEYS[1])
if holder == false then return {'vacant', ''} end
if holder ~= ARGV[1] then return {'held', holder} end
local newest = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
local top = '0-0'
if #newest > 0 then top = newest[1][1] end
if top ~= ARGV[2] then return {'moved', top} end
for i = 3, #ARGV, 3 do
  top = redis.call('XADD', KEYS[2], '*', 'db', ARGV[i], 'key', ARGV[i + 1], 'value', ARGV[i + 2])
end
if redis.call('HEXISTS', KEYS[3], 'stc') == 1 then redis.call('HSET', KEYS[3], 'stc', 0) end
return {'ok', top}`;

/** The id of a lane's newest stream entry ('0-0' when it has none). */
export async function streamTop(redis: Redis, crew: string, lane: string): Promise<string> {
  const [newest] = await redis.xrevrange(laneStreamKey(crew, lane), '+', '-', 'COUNT', 1);
  return newest?.[0] ?? '0-0';
}

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
 * as dispatched is in Redis before its provider can run.
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
  /** Set once the lane was found taken (another worker holds its job, or its stream moved on past this worker's history, or its job came back to none): nothing more is written, ever. */
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

  /** Sends what changed; rejects with LANE_TAKEN once the job's lock is another worker's, or its stream another's history. Flushes run one after another. */
  flush(): Promise<void> {
    const next = this.chain.then(() => this.send());
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

  private async send(): Promise<void> {
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
    if (args.length === 0) return;
    // A job without a holder is waited for (nothing of the lane starts meanwhile): it comes
    // back to this worker (retoken) or another takes it (LANE_TAKEN).
    // So is one this worker holds under a token the lane has not been handed yet (the job
    // came back here and its new processor is about to retoken the lane).
    // The wait counts from when Redis takes writes again: a lock that lapsed while Redis
    // refused every write (its maxmemory) was not taken, and the stalled check has yet to
    // put the job back.
    let vacantUntil = performance.now() + (this.lane.vacantMs ?? 0);
    const ours = this.lane.ours ?? (() => false);
    // BullMQ's job hash is its lock key without the ':lock'.
    const jobKey = this.lane.lockKey.replace(/:lock$/, '');
    let top: string;
    for (;;) {
      if (this.lost !== undefined) throw this.lost;
      const token = this.token;
      const position = this.position;
      // A Redis at its maxmemory is waited out: the lane starts nothing meanwhile.
      let refused = false;
      this.evals += 1;
      let reply: [string, string];
      try {
        reply = (await whileOutOfMemory(() => this.redis.eval(FENCED_XADD, 3, this.lane.lockKey, laneStreamKey(crew, id), jobKey, token, position, ...args), undefined, () => (refused = true))) as [string, string];
      } finally {
        this.evals -= 1;
      }
      if (refused) vacantUntil = performance.now() + (this.lane.vacantMs ?? 0);
      const [status, value] = reply;
      if (status === 'ok') {
        top = value;
        break;
      }
      if (status === 'moved') {
        // Past this worker's history: another worker's. Short of it: Redis lost entries
        // (a flush, a restart without them) and got back only part, of this worker's own.
        if (compareIds(value, position) > 0) throw this.fallBehind(value);
        this.resend(value);
        return this.send();
      }
      // Handed a new token meanwhile: tried again with it at once.
      if (this.token !== token) continue;
      const between = status === 'vacant' || ours(value);
      // Lost for good: a job that comes back here later starts the lane again, never this run.
      if (!between || performance.now() >= vacantUntil) throw (this.lost = new LanewardError('LANE_TAKEN', `lane ${id} of crew ${crew} is held by another worker now: this one stops it and writes nothing more`));
      this.lane.onVacant?.();
      if (this.token === token) await new Promise((resolve) => setTimeout(resolve, VACANT_POLL_MS));
    }
    this.position = top;
    this.lane.onAppended?.(top);
    this.journalSeq = journalSeq;
    this.laneSeq = laneSeq;
    for (const attempt of blobs) this.blobsSent.add(attempt);
    for (const [key, bytes] of versions) this.sent.set(key, bytes);
  }
}

/** One mirrored record, decoded. */
export interface MirroredRecord {
  readonly db: MirroredDb;
  readonly key: unknown;
  readonly value: unknown;
}

/** A lane's stream, decoded in order (no records when the lane never started anywhere), and its newest id ('0-0': none). */
export async function readLaneStream(redis: Redis, crew: string, lane: string): Promise<{ readonly records: MirroredRecord[]; readonly top: string }> {
  const entries = await redis.xrangeBuffer(laneStreamKey(crew, lane), '-', '+');
  const records: MirroredRecord[] = [];
  let top = '0-0';
  for (const [idBytes, fields] of entries) {
    const field = new Map<string, Buffer>();
    for (let i = 0; i + 1 < fields.length; i += 2) field.set(fields[i]!.toString('utf8'), fields[i + 1]!);
    const db = field.get('db')?.toString('utf8') as MirroredDb | undefined;
    const key = field.get('key');
    const value = field.get('value');
    if (db === undefined || key === undefined || value === undefined) throw new LanewardError('JOB_INVALID', `lane ${lane}'s stream holds a record without db, key and value`);
    records.push({ db, key: cbor.decode(key), value: cbor.decode(value) });
    top = idBytes.toString('utf8');
  }
  return { records, top };
}
