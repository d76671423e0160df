import { holderAlive, processStart } from './process-alive.ts';

/**
 * A process that holds something (a crew on a state root, a review run): its pid, its
 * start tick (/proc/<pid>/stat field 22, so a pid the kernel handed to a later process is
 * not taken for it) and since when.
 */
export interface Holder {
  readonly pid: number;
  readonly ticks: string;
  readonly since: string;
}

/** This process as the holder of a claim it takes now. */
export function thisHolder(): Holder {
  return { pid: process.pid, ticks: processStart(process.pid)?.ticks ?? '', since: new Date().toISOString() };
}

/**
 * Whether `holder` still keeps a claim from this process: it runs (not gone, not a zombie,
 * its pid not reused). A holder that died holds nothing, so its claim is taken over.
 * `ownPid` says what a claim recorded by this very process is: `mine` (taken again: one
 * process runs a crew once at a time, so it is this process's own leftover) or `held`
 * (refused: two calls in one process are two claims, told apart by a token).
 */
export function stillHeld(holder: Holder | undefined, ownPid: 'mine' | 'held'): boolean {
  if (holder === undefined) return false;
  if (holder.pid === process.pid && ownPid === 'mine') return false;
  return holderAlive(holder);
}
