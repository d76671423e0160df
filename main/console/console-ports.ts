import { join } from 'node:path';
import type { ConsoleActions, ControlRequest, ControlResult } from '../../formats/console/actions.ts';
import type { LoadedCrew } from '../crew/load-crew.ts';
import { answerLoaded } from '../crew/crew-answer.ts';
import type { ConsoleReads } from './serve.ts';
import { readLaneDiff } from './lane-diff.ts';
import { readLaneGate } from './lane-gate.ts';

/**
 * The console's reads on request for a crew: a lane's gate from its run directory, its
 * diff from the crew's repository. Only lanes the crew file names are read (an id from a
 * URL never becomes a path of its own); `headOf` is the lane's head commit as saved.
 */
export function consoleReads(loaded: LoadedCrew, headOf: (lane: string) => string | null): ConsoleReads {
  const known = new Set(loaded.lanes.map((lane) => lane.id));
  return {
    gate: (lane) => (known.has(lane) ? readLaneGate(lane, join(loaded.out, lane)) : undefined),
    diff: async (lane) => {
      if (!known.has(lane)) return undefined;
      const workspace = loaded.workspace;
      if (workspace === null) return { status: 'unavailable', detail: 'the crew has no workspace' };
      return readLaneDiff({ repo: workspace.repo, base: workspace.commit, head: headOf(lane) });
    },
  };
}

/**
 * What the console of a running crew acts through: answers by the same code `crew answer`
 * runs (recorded as `human:<name>`; the crew's own lane drivers see them in the store and
 * go on); control requests by `control`, or, in a crew that cannot take them, refused.
 */
export function crewConsoleActions(crew: { readonly loaded: LoadedCrew; readonly root: string; readonly env: NodeJS.ProcessEnv; readonly cwd: string }, control?: (request: ControlRequest) => Promise<ControlResult>): ConsoleActions {
  return {
    answer: (lanes, reply, by) => answerLoaded(crew, lanes, reply, by),
    control: (request) => (control === undefined ? Promise.resolve({ status: 'refused', code: 'CONSOLE_READ_ONLY', detail: `this crew process takes no ${request.action} from its console`, seq: null }) : control(request)),
  };
}
