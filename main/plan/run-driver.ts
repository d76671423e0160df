import { randomBytes } from 'node:crypto';
import { LanewardError } from '../../formats/codes/error.ts';
import type { RunDriver } from '../../formats/review/run-record.ts';
import { stillHeld, thisHolder } from '../process/holder-claim.ts';
import { transact } from '../store/store.ts';
import { claim, unclaim } from './core/driver.ts';
import { locateRun, runDirOf } from './locate.ts';
import type { PlanEnv } from './settings.ts';
import { readBinding } from './run-binding.ts';

/** Gives the claim back; a no-op once another driver took it over. */
export type ReleaseRun = () => Promise<void>;

/**
 * Claims the run in `out` for this `plan run`, in one write transaction on its record: a
 * second driver while the first still runs would dispatch the same attempts, so it is
 * refused (RUN_BUSY) before it dispatches or changes anything. A driver that died (killed,
 * crashed, or a pid since reused by a later process) holds nothing: its claim is taken
 * over. Returns the release, or undefined when the run does not exist yet (its first
 * `next` creates it; claim right after).
 */
export async function claimRun(out: string, planEnv: PlanEnv): Promise<ReleaseRun | undefined> {
  const runDir = runDirOf(out, planEnv);
  if (readBinding(runDir) === undefined) return undefined;
  const { store, record } = locateRun(out, planEnv);
  const mine: RunDriver = { ...thisHolder(), token: randomBytes(8).toString('hex') };
  const held = await transact(store, 'runs', record.run, (current) => {
    if (current === undefined) throw new LanewardError('RUN_NOT_INITIALIZED', `run ${record.run} vanished from ${store.root}`);
    // Another plan run in this very process is another claim (its token tells them apart).
    const holder = claim(current, { mine, alive: (driver) => stillHeld(driver, 'held') });
    return { change: holder === undefined ? { record: current, events: [] } : null, result: holder };
  });
  if (held !== undefined) {
    const same = held.pid === process.pid ? ' (this process, another plan run)' : '';
    throw new LanewardError('RUN_BUSY', `run ${record.run} is driven by process ${held.pid}${same} since ${held.since}; nothing was dispatched`, { path: runDir });
  }
  return async () => {
    await transact(store, 'runs', record.run, (current) => {
      if (current === undefined || !unclaim(current, { token: mine.token })) return { change: null, result: undefined };
      return { change: { record: current, events: [] }, result: undefined };
    });
  };
}

