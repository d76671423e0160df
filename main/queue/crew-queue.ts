import { LanewardError } from '../../formats/codes/error.ts';
import { verifyCrewActions } from '../crew/crew-actions.ts';
import { runCrewSession, type CrewOutput, type CrewRunResult } from '../crew/crew-session.ts';
import { QueuedLanes, type QueuedCrewOptions } from './queued-lanes.ts';
import { OWNER_ANSWERS } from '../../formats/crew/file.ts';

export type { QueuedCrewOptions } from './queued-lanes.ts';

/**
 * `crew run --queue`: checks the crew as a local run does, enqueues one signed job per lane
 * (a lane already queued, running or done is not added twice), and follows them through
 * BullMQ's events: lanes' progress feeds the same views and the coordinator's store as it
 * changes, each lane's exported run directory is written under the crew's out (temp +
 * rename) and validated again here, and the same CREW_LANE and CREW_SUMMARY lines are
 * printed (the crew session's). Redis unreachable, at the start or for longer than the
 * timeout mid-crew, is QUEUE_UNAVAILABLE; the lanes keep running on their workers, and the
 * same command later picks up their results.
 */
export async function crewRunQueued(options: QueuedCrewOptions, io: CrewOutput): Promise<CrewRunResult> {
  return runCrewSession(options, io, (loaded, root) => {
    // A queued lane's gate is answered on its worker: the owner's answer has no way there yet.
    if (loaded.crew.answer === OWNER_ANSWERS) throw new LanewardError('CREW_INVALID', `answer: "owner" is not supported with --queue yet: the lanes' gates are answered on the workers; run it without --queue`, { path: loaded.file });
    if (loaded.workspace !== null) throw new LanewardError('USAGE', `--queue: crew ${loaded.crew.crew} names a workspace; worktrees of a repository on another machine are not supported yet: run it without --queue`);
    verifyCrewActions(loaded);
    return { loaded, runner: new QueuedLanes(loaded, root, options) };
  });
}

