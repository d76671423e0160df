import type { CrewSnapshot } from '../../formats/console/snapshot.ts';
import type { CrewRunRecord } from '../../formats/crew/record.ts';

/** A crew run as the store keeps it for the console: started (`last` null) or ended with its view's last snapshot. */
export function crewRunRecord(
  run: Pick<CrewRunRecord, 'crew' | 'runId' | 'file' | 'startedAt' | 'retryCommand' | 'capUsd' | 'reserveUsd' | 'stuckAfterS'>,
  last: CrewSnapshot | null,
  stoppedBy: string | null,
): CrewRunRecord {
  return {
    ...run,
    endedAt: last?.now ?? null,
    summary: last?.summary ?? null,
    stoppedBy: last === null ? null : stoppedBy,
    final: last === null ? null : { attempts: last.attempts, renewalP99Ms: last.renewalP99Ms, histogram: last.histogram, providers: last.providers },
  };
}
