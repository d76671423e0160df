import type { CrewDriver } from '../../formats/crew/record.ts';
import { LanewardError } from '../../formats/codes/error.ts';
import { holderAlive, processStart } from '../process/process-alive.ts';
import { writeTransaction, type Store } from '../store/store.ts';

/**
 * Claims a crew for this process, in one transaction: a second `crew run` of the same crew
 * on the same state root while the first still runs would drive the same lanes twice, so
 * it is refused (CREW_BUSY) before it touches a lane. A driver that died (killed, crashed)
 * holds nothing: its claim is taken over. Returns the release.
 */
export async function claimCrew(store: Store, crew: string): Promise<() => Promise<void>> {
  const mine: CrewDriver = { pid: process.pid, ticks: processStart(process.pid)?.ticks ?? '', since: new Date().toISOString() };
  const held = await writeTransaction(store, store.crewDrivers, () => {
    const current = store.crewDrivers.get(crew);
    if (current !== undefined && current.pid !== process.pid && holderAlive(current)) return current;
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
