import type { LaneRecord, QaMode, Reservation, Turn, TurnRange } from '../../formats/qa/record.ts';
import type { ChildRecord } from '../../formats/supervision/child-record.ts';
import { holderAlive, processStart } from '../process/process-alive.ts';

/**
 * The deltas handed to observer calls and not yet judged. A call reserves its turns in
 * the transaction that decides it, owned by this process; its end, recorded in a second
 * transaction, releases them. A process killed in between leaves the reservation, and
 * since nobody judged those turns, the next decision on the lane (a cadence window or the
 * cross-check) takes them over: a delta is never lost to a kill, and never handed to two
 * live calls at once.
 */

/** A reservation no process owns: given back by a call whose observer never ran. */
const NOBODY = { pid: 0, ticks: '' } as const;

let own: Reservation['owner'] | undefined;

/** This process, as a reservation's owner. */
export function thisOwner(): Reservation['owner'] {
  own ??= { pid: process.pid, ticks: processStart(process.pid)?.ticks ?? '' };
  return own;
}

/**
 * The calls whose reservations no live process owns, read before the deciding
 * transaction (a transaction step reads nothing of the world). A reservation made after
 * this read is counted live, which is what it is.
 */
export function orphanedCalls(record: LaneRecord | undefined): ReadonlySet<number> {
  return new Set((record?.reserved ?? []).filter((r) => !holderAlive(r.owner)).map((r) => r.call));
}

/**
 * Decides a call's delta in the deciding transaction: the orphaned reservations' turns
 * (taken over), then `extra` of them (the live ones' too, for the cross-check), then the
 * turns never sent; reserves them all for `call`, owned by this process, and moves
 * lastSent to the end. Returns the ranges in order, merged.
 */
export function reserveDelta(record: LaneRecord, call: number, mode: QaMode, orphaned: ReadonlySet<number>, options: { includeLive?: boolean; dir?: string } = {}): TurnRange[] {
  const reserved = record.reserved ?? [];
  const taken = reserved.filter((r) => orphaned.has(r.call) || r.owner.pid === NOBODY.pid);
  const live = reserved.filter((r) => !taken.includes(r));
  const ranges = [...taken.flatMap((r) => r.ranges), ...(options.includeLive === true ? live.flatMap((r) => r.ranges) : []), [record.lastSent, record.turns.length] as const];
  const merged = merge(ranges);
  record.reserved = [...live, { call, mode, ranges: merged, owner: thisOwner(), ...(options.dir === undefined ? {} : { dir: options.dir }) }];
  record.lastSent = record.turns.length;
  return merged;
}

/** Reserves a call that is given no turns (a bootstrap): the reservation names its directory and, once spawned, its observer. */
export function reserveCall(record: LaneRecord, call: number, mode: QaMode, dir: string): void {
  record.reserved = [...(record.reserved ?? []), { call, mode, ranges: [], owner: thisOwner(), dir }];
}

/** Journals `call`'s observer, just spawned, in its reservation (when this process still owns it). */
export function journalChild(record: LaneRecord, call: number, child: ChildRecord): boolean {
  const mine = (record.reserved ?? []).find((r) => r.call === call && r.owner.pid === thisOwner().pid && r.owner.ticks === thisOwner().ticks);
  if (mine === undefined) return false;
  record.reserved = (record.reserved ?? []).map((r) => (r === mine ? { ...r, child } : r));
  return true;
}

/**
 * Takes `call`'s orphaned reservation over for this process (in the transaction that
 * settles it), when `owner` (the dead process read before the transaction) still owns
 * it: undefined when it is gone or another process took it first, so two processes
 * never settle one call.
 */
export function takeOver(record: LaneRecord, call: number, owner: Reservation['owner']): Reservation | undefined {
  const theirs = (record.reserved ?? []).find((r) => r.call === call && r.owner.pid === owner.pid && r.owner.ticks === owner.ticks);
  if (theirs === undefined || theirs.dir === undefined) return undefined;
  const mine = { ...theirs, owner: thisOwner() };
  record.reserved = (record.reserved ?? []).map((r) => (r === theirs ? mine : r));
  return mine;
}

/** The directories open reservations name: kept until their calls' ends are recorded. */
export function keptDirs(record: LaneRecord | undefined): ReadonlySet<string> {
  return new Set((record?.reserved ?? []).flatMap((r) => (r.dir === undefined ? [] : [r.dir])));
}

/**
 * Releases `call`'s reservation once its end is recorded. A call whose observer never
 * ran gives its turns back: the tail by moving lastSent back (when no later call reserved
 * past it), the rest as a reservation nobody owns, which the next decision takes.
 */
export function releaseDelta(record: LaneRecord, call: number, started: boolean): TurnRange[] {
  const mine = (record.reserved ?? []).find((r) => r.call === call);
  if (mine === undefined) return [];
  const rest = (record.reserved ?? []).filter((r) => r !== mine);
  if (started) {
    record.reserved = rest;
    return [...mine.ranges];
  }
  const back = [...mine.ranges];
  const tail = back.at(-1);
  if (tail !== undefined && tail[1] === record.lastSent) {
    record.lastSent = tail[0];
    back.pop();
  }
  record.reserved = back.length === 0 ? rest : [...rest, { call, mode: mine.mode, ranges: back, owner: NOBODY }];
  return [];
}

/** The turns of `ranges`, in order. */
export function turnsIn(record: LaneRecord, ranges: readonly TurnRange[]): Turn[] {
  return ranges.flatMap(([from, to]) => record.turns.slice(from, to));
}

/** Sorted, without empty ranges, adjacent and overlapping ones joined. */
function merge(ranges: readonly TurnRange[]): TurnRange[] {
  const sorted = ranges.filter(([from, to]) => to > from).sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [from, to] of sorted) {
    const last = out.at(-1);
    if (last !== undefined && from <= last[1]) last[1] = Math.max(last[1], to);
    else out.push([from, to]);
  }
  return out;
}
