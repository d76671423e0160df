import { Encoder } from 'cbor-x';
import type Redis from 'ioredis';
import { LanewardError } from '../../formats/codes/error.ts';
import { crewQaLaneId } from '../../formats/crew/qa-id.ts';

// One codec for keys and values, self-contained records (no shared structures), as the store keeps them.
export const cbor = new Encoder({ useRecords: false, structuredClone: false });

/** The databases a lane's state lives in, by the name its stream records carry. */
export type MirroredDb = 'crewLanes' | 'runs' | 'journal' | 'blobs' | 'lanes' | 'laneJournal';

/** The Redis stream a lane's records are mirrored to. */
export function laneStreamKey(crew: string, lane: string): string {
  return `laneward:lane:${crewQaLaneId(crew, lane)}`;
}

/**
 * Where a lane's coordinator says how far its own store holds the lane's stream: the id
 * of the newest entry it copied and committed. Stream ids are never reused (what is put
 * back keeps its ids, and new entries come after the newest), so an id at or below it is
 * in the coordinator's copy, and survives a Redis that loses its data.
 */
export function copiedKey(qa: string): string {
  return `laneward:copied:${qa}`;
}

/** The stream a crew run's workers ask its coordinator on, before a lane starts on them (see askCoordinator). */
export function asksKey(runAs: string): string {
  return `laneward:asks:${runAs}`;
}

/** Where the coordinator answers one ask (its nonce) about a lane. */
export function answerKey(qa: string, nonce: string): string {
  return `laneward:answer:${qa}:${nonce}`;
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
// still is. With no records it is the same check alone (a worker waiting for its
// coordinator's copy asks it again): nothing is written.
// Every 'ok' carries how far the coordinator copied the stream (KEYS[4]; '0-0': not yet).
const FENCED_XADD = `
local holder = redis.call('GET', KEYS[1])
if holder == false then return {'vacant', ''} end
if holder ~= ARGV[1] then return {'held', holder} end
local newest = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
local top = '0-0'
if #newest > 0 then top = newest[1][1] end
if top ~= ARGV[2] then return {'moved', top} end
if #ARGV > 2 then
  for i = 3, #ARGV, 3 do
    top = redis.call('XADD', KEYS[2], '*', 'db', ARGV[i], 'key', ARGV[i + 1], 'value', ARGV[i + 2])
  end
  if redis.call('HEXISTS', KEYS[3], 'stc') == 1 then redis.call('HSET', KEYS[3], 'stc', 0) end
end
return {'ok', top, redis.call('GET', KEYS[4]) or '0-0'}`;

/** What a fenced append answered: appended (or, with no records, still in place), and how far the coordinator copied; or why not. */
export type FenceReply = readonly ['ok', string, string] | readonly ['vacant' | 'held' | 'moved', string];

/** Appends `records` (db, key, value triples) to the lane's stream under the fence above. */
export async function fencedAppend(redis: Redis, keys: { readonly lock: string; readonly stream: string; readonly job: string; readonly copied: string }, token: string, position: string, records: readonly (string | Buffer)[]): Promise<FenceReply> {
  return (await redis.eval(FENCED_XADD, 4, keys.lock, keys.stream, keys.job, keys.copied, token, position, ...records)) as FenceReply;
}

/** The id of a lane's newest stream entry ('0-0' when it has none). */
export async function streamTop(redis: Redis, crew: string, lane: string): Promise<string> {
  const [newest] = await redis.xrevrange(laneStreamKey(crew, lane), '+', '-', 'COUNT', 1);
  return newest?.[0] ?? '0-0';
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
