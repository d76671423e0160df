import type { CallCode } from '../../formats/console/snapshot.ts';
import { crewQaLaneId } from '../../formats/crew/qa-id.ts';
import type { LaneProgress } from '../../formats/crew/record.ts';
import { readBinding } from '../plan/run-binding.ts';
import { readJournal, readLaneJournal, type Store } from '../store/store.ts';
import { qaStory } from './qa-story.ts';
import { reviewAttempts } from './review-story.ts';

/**
 * Every supervised call of a lane that ended with a code, in the story's order (reviewer
 * attempts, observer calls, agent turns), as its journals and progress keep them: a call
 * whose result stood though it ended typed (PROVIDER_NO_EXIT) as much as one that failed.
 * What the lane's line, the crew's report and the crew page show beside the lane's own
 * code, which names only how the lane ended. Only reads.
 */
export function laneCallCodes(store: Store, progress: LaneProgress): CallCode[] {
  const codes: CallCode[] = [];
  const run = runOf(progress.runDir);
  const record = run === null ? undefined : store.runs.get(run);
  if (record !== undefined) {
    for (const a of reviewAttempts(record, readJournal(store, record.run))) if (a.code !== null) codes.push({ call: a.id, kind: 'reviewer', code: a.code });
  }
  for (const a of qaStory(readLaneJournal(store, crewQaLaneId(progress.crew, progress.lane))).attempts) if (a.code !== null) codes.push({ call: a.id, kind: 'observer', code: a.code });
  for (const end of progress.turnEnds ?? []) codes.push({ call: `turn:${end.turn}`, kind: 'agent', code: end.code });
  return codes;
}

/**
 * {@link laneCallCodes} read again only when the lane saved a change: a call's end is
 * followed by a save of its lane (its stage, its attempts), and a viewer polling a crew of
 * many lanes every second must not read every journal every second.
 */
export function cachedCallCodes(store: Store): (progress: LaneProgress) => CallCode[] {
  const cache = new Map<string, { key: string; codes: CallCode[] }>();
  return (progress) => {
    const key = `${progress.updatedAt}|${progress.stage}|${progress.attempts}|${progress.turnsDone}`;
    const hit = cache.get(progress.lane);
    if (hit?.key === key) return hit.codes;
    const codes = laneCallCodes(store, progress);
    cache.set(progress.lane, { key, codes });
    return codes;
  };
}

function runOf(runDir: string): string | null {
  try {
    return readBinding(runDir)?.run ?? null;
  } catch {
    return null;
  }
}
