import { closeSync, openSync, readdirSync, readSync } from 'node:fs';
import { nowMs } from './monotonic-timer.ts';
import { readProcStat, statScratch, type ProcStat } from './proc-stat.ts';

/**
 * Every process on the machine at one moment, indexed by pid, session and process group.
 * Immutable once taken: supervisions may share one without sharing anything they change.
 */
export interface ProcSnapshot {
  /** Monotonic ms when the listing began. */
  readonly takenAt: number;
  /** False when /proc could not be listed; the census then falls back to kill(-pgid, 0). */
  readonly readable: boolean;
  /** The kernel's last pid when the listing began: the next snapshot re-reads pids allocated since. */
  readonly lastPid: number | undefined;
  readonly byPid: ReadonlyMap<number, ProcStat>;
  /** Processes of each session and of each process group (a process is in both maps). */
  readonly bySession: ReadonlyMap<number, readonly ProcStat[]>;
  readonly byGroup: ReadonlyMap<number, readonly ProcStat[]>;
  /** Children by parent pid, as listed. */
  readonly byParent: ReadonlyMap<number, readonly ProcStat[]>;
}

/**
 * The kernel's last allocated pid (this pid namespace), or undefined where it cannot be
 * read. Pids are allocated cyclically, so every process created between two readings has
 * a pid in the cyclic interval between them.
 */
export function lastPid(scratch: Buffer): number | undefined {
  try {
    const fd = openSync('/proc/sys/kernel/ns_last_pid', 'r');
    try {
      const value = Number(scratch.toString('latin1', 0, readSync(fd, scratch, 0, 32, 0)));
      return Number.isSafeInteger(value) && value > 0 ? value : undefined;
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
}

/** Whether `pid` may have been allocated after `from` was read and up to `to` (cyclic). */
function allocatedBetween(pid: number, from: number, to: number): boolean {
  if (from === to) return false;
  return from < to ? pid > from && pid <= to : pid > from || pid <= to;
}

/**
 * Takes a snapshot: lists /proc and reads the stat of every process, except that a pid
 * already in `previous` whose number the kernel has not handed out since is carried over
 * (its start time, group and session cannot have changed hands: a process never joins
 * another session, and a reused pid is a new allocation). A pid allocated since the
 * previous snapshot began, reused or not, is read afresh, so it is seen as the process it
 * is now. Entries carried over may hold an old state; a census re-reads its own members.
 */
function takeSnapshot(scratch: Buffer, previous: ProcSnapshot | undefined): ProcSnapshot {
  const takenAt = nowMs();
  const startMark = lastPid(scratch);
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return { takenAt, readable: false, lastPid: undefined, byPid: new Map(), bySession: new Map(), byGroup: new Map(), byParent: new Map() };
  }
  const endMark = lastPid(scratch);
  const carry = previous?.readable === true && previous.lastPid !== undefined && endMark !== undefined;
  const byPid = new Map<number, ProcStat>();
  const bySession = new Map<number, ProcStat[]>();
  const byGroup = new Map<number, ProcStat[]>();
  const byParent = new Map<number, ProcStat[]>();
  for (const name of names) {
    const first = name.charCodeAt(0);
    if (first < 48 || first > 57) continue;
    const pid = Number(name);
    const known = carry ? previous!.byPid.get(pid) : undefined;
    const stat = known !== undefined && !allocatedBetween(pid, previous!.lastPid!, endMark!) ? known : readProcStat(pid, scratch);
    if (stat === undefined) continue;
    byPid.set(pid, stat);
    push(bySession, stat.sid, stat);
    push(byGroup, stat.pgid, stat);
    if (stat.ppid !== undefined) push(byParent, stat.ppid, stat);
  }
  return { takenAt, readable: true, lastPid: startMark, byPid, bySession, byGroup, byParent };
}

function push(map: Map<number, ProcStat[]>, key: number, stat: ProcStat): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [stat]);
  else list.push(stat);
}

/**
 * Hands out snapshots, at most one per turn of the event loop: every supervision that
 * looks during one turn gets the same immutable snapshot, so a storm of teardowns costs
 * one /proc scan per turn rather than one per supervision. `next()` is a snapshot taken
 * in a later turn, for proofs that need a listing made after a member was seen dead.
 * Owned by whoever runs the supervisions (one per worker thread, or one per in-process
 * caller); the snapshots themselves are never changed.
 */
export class ProcSnapshots {
  private turn: ProcSnapshot | undefined;
  private last: ProcSnapshot | undefined;
  private later: Promise<ProcSnapshot> | undefined;
  private readonly scratch = statScratch();
  private warming = false;

  private take(): ProcSnapshot {
    this.last = takeSnapshot(this.scratch, this.last);
    return this.last;
  }

  /**
   * Takes the first snapshot soon, in a turn of its own, if none was taken yet. The first
   * one reads the stat of every process on the machine (later ones only what changed):
   * taken when the first child starts rather than when the first teardown needs it, it
   * does not stand between a deadline and the signals of the teardowns it sets off.
   */
  warm(): void {
    if (this.last !== undefined || this.warming) return;
    this.warming = true;
    setImmediate(() => {
      this.warming = false;
      if (this.last === undefined) this.take();
    }).unref();
  }

  /** The snapshot of this turn, taken now if nobody took one yet. */
  current(): ProcSnapshot {
    if (this.turn === undefined) {
      this.turn = this.take();
      // Hint: setImmediate runs after this turn's timers and I/O callbacks, so everything
      // that looks during one turn shares the scan; the next turn scans again.
      setImmediate(() => (this.turn = undefined));
    }
    return this.turn;
  }

  /** A snapshot taken in a later turn than this call, shared by every caller of this turn. */
  next(): Promise<ProcSnapshot> {
    this.later ??= new Promise((resolve) =>
      setImmediate(() => {
        this.later = undefined;
        this.turn = undefined;
        resolve(this.current());
      }),
    );
    return this.later;
  }
}
