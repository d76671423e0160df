import type { CrewSnapshot } from '../../formats/console/snapshot.ts';
import { isTerminalStage, type CrewRunRecord, type LaneProgress } from '../../formats/crew/record.ts';

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

/**
 * Whether a run of a crew whose lanes stand as `lanes` (its stored progress, in file order;
 * undefined for a lane never started) has nothing to run: every lane ended, none that it
 * would take up again (an interrupted lane resumes; a failed one runs again under
 * --retry-failed). Such a run (crew run --serve on a finished crew, to look at it) keeps
 * the crew's recorded run: its attempts and duration are the crew's work, and a run that
 * did none must not replace them with its own zeros.
 */
export function runsNothing(lanes: readonly (LaneProgress | undefined)[], retryFailed: boolean): boolean {
  return lanes.every((lane) => {
    if (lane === undefined || !isTerminalStage(lane.stage)) return false;
    if (lane.stage === 'interrupted' && lane.stoppedIn !== null) return false;
    return !(retryFailed && lane.stage === 'failed');
  });
}
