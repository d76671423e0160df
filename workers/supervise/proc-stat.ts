import { closeSync, openSync, readSync } from 'node:fs';

/** What /proc/<pid>/stat says about one process, as far as supervision needs it. */
export interface ProcStat {
  readonly pid: number;
  /** The one-letter state of the main thread (R, S, D, Z, X, ...). */
  readonly state: string;
  /** The parent's pid (field 4): 1 or a subreaper once the parent died. */
  readonly ppid?: number;
  readonly pgid: number;
  readonly sid: number;
  /** Threads of the process still counted by the kernel (field 20). */
  readonly threads: number;
  /**
   * Start time in clock ticks after boot (field 22). With the pid it names one process:
   * a pid reused by a new process comes back with a later start time.
   */
  readonly startTime: number;
}

/**
 * Reads one process's stat into `scratch` (open, read, close: a third of the cost of
 * readFileSync, which stats the file and allocates). Undefined once the pid is gone.
 */
export function readProcStat(pid: number, scratch: Buffer): ProcStat | undefined {
  let text: string;
  try {
    const fd = openSync(`/proc/${pid}/stat`, 'r');
    try {
      text = scratch.toString('latin1', 0, readSync(fd, scratch, 0, scratch.length, 0));
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined; // exited and reaped, or never there
  }
  // The command name may hold spaces and parentheses: fields start after the last ')'.
  // Index 0 is field 3 (state); pgrp is field 5, session 6, num_threads 20, starttime 22.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return {
    pid,
    state: fields[0]!,
    ppid: Number(fields[1]),
    pgid: Number(fields[2]),
    sid: Number(fields[3]),
    threads: Number(fields[17]),
    startTime: Number(fields[19]),
  };
}

/**
 * Whether a process can still run. A zombie's main thread has exited, but the process is
 * dead only when no thread of it runs: a main thread that called pthread_exit leaves the
 * process in state Z while its other threads carry on (the thread count says so).
 */
export function canRun(stat: ProcStat): boolean {
  if (stat.state !== 'Z' && stat.state !== 'X') return true;
  return stat.threads > 1;
}

/** Scratch space for one stat line; /proc/<pid>/stat is well under this. */
export function statScratch(): Buffer {
  return Buffer.allocUnsafe(1024);
}
