import { readdirSync } from 'node:fs';
import { nowMs } from './monotonic-timer.ts';
import { readProcStat, statScratch, type ProcStat } from './proc-stat.ts';

/**
 * Every process on the machine at one moment, indexed by session and by process group.
 * Immutable once taken: supervisions may share one without sharing anything they change.
 */
export interface ProcSnapshot {
  /** Monotonic ms when the listing began. */
  readonly takenAt: number;
  /** False when /proc could not be listed; the census then falls back to kill(-pgid, 0). */
  readonly readable: boolean;
  /** Processes of each session and of each process group (a process is in both maps). */
  readonly bySession: ReadonlyMap<number, readonly ProcStat[]>;
  readonly byGroup: ReadonlyMap<number, readonly ProcStat[]>;
}

/**
 * Takes a full snapshot: lists /proc, then reads every process's stat afresh, so a pid
 * that died and was reused since the last look is seen as the process it is now.
 */
function takeSnapshot(scratch: Buffer = statScratch()): ProcSnapshot {
  const takenAt = nowMs();
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return { takenAt, readable: false, bySession: new Map(), byGroup: new Map() };
  }
  const bySession = new Map<number, ProcStat[]>();
  const byGroup = new Map<number, ProcStat[]>();
  for (const name of names) {
    const first = name.charCodeAt(0);
    if (first < 48 || first > 57) continue;
    const stat = readProcStat(Number(name), scratch);
    if (stat === undefined) continue;
    push(bySession, stat.sid, stat);
    push(byGroup, stat.pgid, stat);
  }
  return { takenAt, readable: true, bySession, byGroup };
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
  private later: Promise<ProcSnapshot> | undefined;
  private readonly scratch = statScratch();
  private readonly take: () => ProcSnapshot;

  constructor(take: (scratch: Buffer) => ProcSnapshot = takeSnapshot) {
    this.take = () => take(this.scratch);
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
