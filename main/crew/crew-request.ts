import { LanewardError } from '../../formats/codes/error.ts';
import type { ControlAction } from '../../formats/crew/control.ts';
import { configuredStateRoot, defaultStateRoot } from '../plan/index.ts';
import { openStore } from '../store/store.ts';
import { join } from 'node:path';
import { readProcStat } from '../../workers/supervise/proc-stat.ts';
import { livePidHolding } from '../fs/file-lock.ts';
import { OUT_CLAIM } from './out-claim.ts';
import { readControl, requestControl } from './crew-control.ts';
import { loadCrew } from './load-crew.ts';

export interface CrewRequestOptions {
  readonly file: string;
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly state: string | undefined;
  readonly action: ControlAction;
  readonly lane: string | null;
  /** The operator's name: the request is recorded as `human:<name>`. */
  readonly name: string;
  /** How long to wait for the running crew to take it; undefined: return once recorded. */
  readonly waitMs: number | undefined;
  /** Told, before the request is written, that the crew's run is stopped (its pid): stopped inside a commit, it holds the state root's write lock, and the write waits for it. */
  readonly onStoppedCrew?: (pid: number) => void;
}

/** What a request came to: refused before recording, recorded (requested), or taken by the crew (applied, refused). */
export interface CrewRequestReport {
  readonly action: ControlAction;
  readonly lane: string | null;
  readonly by: string;
  readonly seq: number | null;
  readonly status: 'requested' | 'applied' | 'refused';
  readonly code: string | null;
  readonly detail: string | null;
  /** --wait ran out with the request still not taken. */
  readonly waitedOut: boolean;
}

// How often --wait looks at the request: the crew takes it at its own 250 ms cadence.
const WAIT_POLL_MS = 100;

/** The process that holds the crew's out when it is stopped (a signal: SIGSTOP, or Ctrl-Z in its terminal), else null. */
function stoppedCrew(out: string): number | null {
  const pid = livePidHolding(join(out, OUT_CLAIM));
  if (pid === undefined) return null;
  const state = readProcStat(pid, Buffer.alloc(1_024))?.state;
  return state === 'T' || state === 't' ? pid : null;
}

/**
 * `crew retry|cancel|stop`: an operator's request recorded in the crew's state root (so it
 * works from any shell), refused typed where it cannot apply; with a wait, followed until
 * the running crew took it.
 */
export async function crewRequest(options: CrewRequestOptions): Promise<CrewRequestReport> {
  const loaded = loadCrew(options.file, options.cwd);
  const root = configuredStateRoot(options.state, options.env, options.cwd)?.path ?? defaultStateRoot(options.cwd);
  // Said first: a write that waits for the lock blocks this process (the store's open too),
  // and nothing could be said once it waits.
  const stopped = stoppedCrew(loaded.out);
  if (stopped !== null) options.onStoppedCrew?.(stopped);
  const store = openStore(root);
  const by = `human:${options.name}`;
  const result = await requestControl(store, loaded, { action: options.action, lane: options.lane, by });
  const base = { action: options.action, lane: options.lane, by, waitedOut: false };
  if (result.status === 'refused' || options.waitMs === undefined) return { ...base, ...result };
  const seq = result.seq!;
  const until = performance.now() + options.waitMs;
  for (;;) {
    const record = readControl(store, loaded.crew.crew, seq);
    if (record === undefined) throw new LanewardError('STATE_CORRUPT', `request ${seq} of crew ${loaded.crew.crew} is gone from the state root`, { path: root });
    if (record.status !== 'requested') return { ...base, seq, status: record.status, code: record.code, detail: record.detail };
    if (performance.now() >= until) return { ...base, seq, status: 'requested', code: null, detail: null, waitedOut: true };
    await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS));
  }
}
