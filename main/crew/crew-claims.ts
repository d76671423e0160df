import type { CrewDriver } from '../../formats/crew/record.ts';
import { LanewardError } from '../../formats/codes/error.ts';
import { stillHeld, thisHolder } from '../process/holder-claim.ts';
import { writeTransaction, type Store } from '../store/store.ts';
import type { LoadedCrew } from './load-crew.ts';
import { claimOut } from './out-claim.ts';

/**
 * Claims a crew for this process, in one transaction: a second `crew run` of the same crew
 * on the same state root while the first still runs would drive the same lanes twice, so
 * it is refused (CREW_BUSY) before it touches a lane. A driver that died (killed, crashed)
 * holds nothing: its claim is taken over. `laneControl`: the claim says the crew applies
 * operators' lane requests (crew retry|cancel), so they are refused typed where it does not.
 * Returns the release.
 */
export async function claimCrew(store: Store, crew: string, options: { readonly laneControl?: boolean } = {}): Promise<() => Promise<void>> {
  const mine: CrewDriver = { ...thisHolder(), ...(options.laneControl === true ? { laneControl: true } : {}) };
  const held = await writeTransaction(store, store.crewDrivers, () => {
    const current = store.crewDrivers.get(crew);
    if (stillHeld(current, 'mine')) return current;
    void store.crewDrivers.put(crew, mine);
    return undefined;
  });
  if (held !== undefined) {
    throw new LanewardError('CREW_BUSY', `crew ${crew} is being run by process ${held.pid} since ${held.since} on this state root`);
  }
  return async () => {
    await writeTransaction(store, store.crewDrivers, () => {
      const current = store.crewDrivers.get(crew);
      if (current?.pid === mine.pid && current.ticks === mine.ticks) void store.crewDrivers.remove(crew);
    });
  };
}

/**
 * Both claims every crew run holds for its life, the crew on its state root then its out
 * directory (another crew running in the same out would drive, or carry back into, the
 * same run directories): either refused is CREW_BUSY with nothing started and nothing held.
 * Returns the release of both.
 */
export async function claimCrewRun(store: Store, loaded: LoadedCrew, options: { readonly laneControl?: boolean } = {}): Promise<() => Promise<void>> {
  const releaseCrew = await claimCrew(store, loaded.crew.crew, options);
  let releaseOut: () => void;
  try {
    releaseOut = claimOut(loaded.out, loaded.crew.crew, loaded.file);
  } catch (error) {
    await releaseCrew();
    throw error;
  }
  return async () => {
    try {
      releaseOut();
    } finally {
      await releaseCrew();
    }
  };
}
