import type { TreeCensus } from './census.ts';
import { nowMs } from './monotonic-timer.ts';

export interface TeardownOptions {
  /** SIGTERM first, then SIGKILL after this grace; 0 sends SIGKILL at once. */
  readonly graceMs: number;
  /** Teardown's own budget, never the remainder of another. */
  readonly budgetMs: number;
  /** Settles when the group leader has exited and been reaped: the first check waits for it. */
  readonly leaderExit?: Promise<unknown>;
}

export interface TeardownResult {
  /** True only when no process of the tree can still run. */
  readonly confirmed: boolean;
  /** The first signal sent, if any process was there to receive it. */
  readonly firstSignal: NodeJS.Signals | null;
  readonly durationMs: number;
}

/** Polls start fast (most trees die within milliseconds) and back off to this. */
const POLL_FIRST_MS = 2;
const POLL_MAX_MS = 40;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Stops a supervised tree and proves it gone: SIGTERM (or SIGKILL at once), a grace,
 * SIGKILL, then polls until no member can run. The leader having been reaped is not
 * proof (its children keep the group), and `kill(-pgid, 0)` is not either (zombies
 * answer it), so membership is read from /proc through the supervision's census.
 */
export async function teardownTree(census: TreeCensus, options: TeardownOptions): Promise<TeardownResult> {
  const started = nowMs();
  const elapsed = () => nowMs() - started;
  let firstSignal: NodeJS.Signals | null = null;
  const send = (signal: NodeJS.Signals) => {
    if (census.signal(signal)) firstSignal ??= signal;
  };
  send(options.graceMs > 0 ? 'SIGTERM' : 'SIGKILL');
  let killed = options.graceMs <= 0;
  let pause = POLL_FIRST_MS;
  let leaderGone = false;
  void options.leaderExit?.then(() => (leaderGone = true));
  for (;;) {
    // Wait before looking: a tree just signalled cannot be gone yet, and the leader's reap
    // is the earliest moment it can be. Hint: hundreds of teardowns share one /proc
    // snapshot per turn and back off, or they would turn the loop into a /proc reader.
    // The grace ends on time, not at the next poll of the back-off.
    const untilKill = killed ? Number.POSITIVE_INFINITY : options.graceMs - elapsed();
    const wait = Math.max(1, Math.min(pause, options.budgetMs - elapsed(), untilKill));
    await (leaderGone || options.leaderExit === undefined ? sleep(wait) : Promise.race([sleep(wait), options.leaderExit]));
    pause = Math.min(pause * 2, POLL_MAX_MS);
    if (await census.gone()) return { confirmed: true, firstSignal, durationMs: elapsed() };
    // Once past the grace, SIGKILL again on every poll: a member forked between two
    // signals is caught by the next one.
    if (killed || elapsed() >= options.graceMs) {
      send('SIGKILL');
      // Polls start fast again after the first SIGKILL: the tree dies within milliseconds.
      if (!killed) pause = POLL_FIRST_MS;
      killed = true;
    }
    if (elapsed() >= options.budgetMs) {
      // Out of budget: unproven. SIGKILL still goes out so nothing is left running.
      send('SIGKILL');
      return { confirmed: false, firstSignal, durationMs: elapsed() };
    }
  }
}
