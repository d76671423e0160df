import type { ChildProcess } from 'node:child_process';
import { fdsUnder } from './procs.ts';

// Crash tests SIGKILL a command at random instants and need a share of the kills to land
// inside its work. A delay counted from the spawn does not aim there under load: node's
// start alone varies by more than a whole command takes, and kills then land before the
// command did anything (or after it finished) run after run. An anchor the command itself
// reaches (its store opened, a commit) puts the kill at a chosen point of its work,
// whatever the start cost.

/** Whether `pid` holds a descriptor under `dir` that it did not hold when this was made. */
export function ownDescriptorUnder(pid: number, dir: string): () => boolean {
  // Descriptors it inherited from the test (which may hold the store open) prove nothing.
  const inherited = new Set(fdsUnder(pid, dir));
  return () => fdsUnder(pid, dir).some((fd) => !inherited.has(fd));
}

/** When a kill lands: `delay` ms after the spawn, or after `anchor` first holds (polled every ms). */
export interface Aim {
  readonly delay: number;
  readonly anchor?: (() => boolean) | undefined;
}

export interface AimedKill {
  /** Whether the kill was sent, and what `atKill` said at that instant. */
  readonly result: () => { readonly sent: boolean; readonly atKill: boolean };
  /** Stops the timers (call once the child ended). */
  readonly stop: () => void;
}

/** SIGKILLs `child` at `aim`; `atKill` is sampled just before the signal (say, whether its store is open). */
export function killAt(child: ChildProcess, aim: Aim, atKill: () => boolean = () => false): AimedKill {
  let sent = false;
  let sampled = false;
  let timer: NodeJS.Timeout | undefined;
  let poll: NodeJS.Timeout | undefined;
  const kill = () => {
    sampled = atKill();
    sent = child.kill('SIGKILL');
  };
  const anchor = aim.anchor;
  if (anchor === undefined) timer = setTimeout(kill, aim.delay);
  else {
    poll = setInterval(() => {
      if (!anchor()) return;
      clearInterval(poll);
      timer = setTimeout(kill, aim.delay);
    }, 1);
  }
  return {
    result: () => ({ sent, atKill: sampled }),
    stop: () => {
      clearInterval(poll);
      clearTimeout(timer);
    },
  };
}

/** What an unkilled run showed: ms from its spawn to its store's opening (if seen), and to its exit. */
export interface Watched {
  readonly opened: number | undefined;
  readonly took: number;
}

/** Watches an unkilled child until `done` settles: when it first held a descriptor of its own under `dir`, and when it ended. */
export async function watchOpen<T>(child: ChildProcess, dir: string, done: Promise<T>): Promise<Watched & { readonly ran: T }> {
  const opened = firstSeen(ownDescriptorUnder(child.pid!, dir));
  try {
    const ran = await done;
    return { opened: opened.at(), took: opened.since(), ran };
  } finally {
    opened.stop();
  }
}

/** Polls `check` every 2 ms from now on: `at()` is when it first held (ms from now), `since()` the ms elapsed. */
export function firstSeen(check: () => boolean): { at: () => number | undefined; since: () => number; stop: () => void } {
  const began = performance.now();
  let at: number | undefined;
  const poll = setInterval(() => {
    if (at === undefined && check()) {
      at = Math.round(performance.now() - began);
      clearInterval(poll);
    }
  }, 2);
  return { at: () => at, since: () => Math.round(performance.now() - began), stop: () => clearInterval(poll) };
}
