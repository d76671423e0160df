import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';

// Linux /proc helpers for tests that start real processes and must prove them gone.

export interface ProcStat {
  /** The one-letter state (R, S, D, Z, X, ...). */
  readonly state: string;
  /** The process group id. */
  readonly pgid: number;
  /** Threads still counted by the kernel. */
  readonly threads: number;
}

/** State and process group of `pid` from /proc/<pid>/stat, or undefined once it is gone (reaped). */
export function procStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  // The command name may hold spaces and parentheses: the fields start after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0]!, pgid: Number(fields[2]), threads: Number(fields[17]) };
}

/**
 * A process that can still run: present in /proc and not dead. A zombie whose main thread
 * exited while another thread runs (pthread_exit) still runs.
 */
export function canRun(pid: number): boolean {
  const stat = procStat(pid);
  return stat !== undefined && ((stat.state !== 'Z' && stat.state !== 'X') || stat.threads > 1);
}

/** Every pid in /proc. */
export function allPids(): number[] {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map(Number);
}

/** Processes of the group that can still run (zombies only wait to be reaped). */
export function liveGroupMembers(pgid: number): number[] {
  return allPids().filter((pid) => procStat(pid)?.pgid === pgid && canRun(pid));
}

/** Processes that can still run and carry `tag` (a whole `NAME=value` entry) in their environment, other than this one. */
export function taggedPids(tag: string): number[] {
  return allPids().filter((pid) => {
    if (pid === process.pid || !canRun(pid)) return false;
    try {
      return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(tag);
    } catch {
      return false;
    }
  });
}

/**
 * The descriptors (numbers) `pid` holds open on files under `dir`, say a state root's
 * store; none once it is gone. A child inherits its parent's descriptors that lack
 * close-on-exec (LMDB's, for one), so evidence that a child opened something itself is
 * a descriptor not among those it held at its start.
 */
export function fdsUnder(pid: number, dir: string): string[] {
  let prefix: string;
  try {
    prefix = `${realpathSync(dir)}/`;
  } catch {
    return []; // not made yet: nothing can be open under it
  }
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return [];
  }
  return fds.filter((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith(prefix);
    } catch {
      return false; // closed meanwhile
    }
  });
}

/** The pids a pidfile lists, one a line. */
export function pidsIn(pidfile: string): number[] {
  return readFileSync(pidfile, 'utf8').split('\n').filter((line) => line !== '').map(Number);
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every 20 ms; throws if it does not hold within `ms`, naming `what` was awaited. */
export async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(20);
  }
}

/** Waits up to `ms` for every process carrying `tag` to end; returns those still running then. */
export async function settleTagged(tag: string, ms: number): Promise<number[]> {
  const end = Date.now() + ms;
  for (;;) {
    const left = taggedPids(tag);
    if (left.length === 0 || Date.now() > end) return left;
    await sleep(50);
  }
}

/** Sends `signal` (SIGKILL unless told) to a pid, or to a group as -pgid; a process already gone is no error. */
export function killQuietly(pid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

/** Processes whose command line names `text` (a test's temp root): a child or fixture left running. */
export function pidsNaming(text: string): number[] {
  return allPids().filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes(text);
    } catch {
      return false;
    }
  });
}

/** Kills every process naming `text` and returns their pids: a test asserts the list is empty. */
export function killStrays(text: string): number[] {
  const left = pidsNaming(text);
  for (const pid of left) killQuietly(pid);
  return left;
}

/**
 * The child's exit, once what it wrote to its piped stdout and stderr has been read too:
 * 'exit' can come before the last of it is, and a test reading its lines then finds them
 * cut (a row number missing under load). Bounded: a pipe an orphan of the child still
 * holds open is waited for 2 s at most. Call it when the child is spawned.
 */
export function exitOf(child: ChildProcess): Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }> {
  const drained = Promise.all([child.stdout, child.stderr].map((stream) => (stream === null || stream.readableEnded || stream.destroyed ? undefined : new Promise((resolve) => stream.once('close', resolve)))));
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      const timer = setTimeout(() => resolve({ code, signal }), 2_000);
      void drained.then(() => {
        clearTimeout(timer);
        resolve({ code, signal });
      });
    });
  });
}
