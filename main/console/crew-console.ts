import { loadCrew, type LoadedCrew } from '../crew/load-crew.ts';
import { resumeAdvice, retryAdvice, answerAdvice } from '../crew/retry-advice.ts';
import { configuredStateRoot, defaultStateRoot } from '../plan/index.ts';
import { rehearsalOf } from '../rehearse/rehearsal.ts';
import { openStore, type Store } from '../store/store.ts';
import { StoreSource } from './store-source.ts';
import { readLaneStory } from './lane-story.ts';
import { join } from 'node:path';
import { planTitles } from './plan-titles.ts';
import type { LaneStory } from '../../formats/console/lane-story.ts';

const workspace = (loaded: LoadedCrew) => (loaded.workspace === null ? null : { repo: loaded.workspace.repo, base: loaded.workspace.commit });

/** A crew's console read from its state root by a process that does not run it. */
export interface CrewConsole {
  readonly loaded: LoadedCrew;
  readonly store: Store;
  readonly root: string;
  readonly source: StoreSource;
}

/**
 * Opens a crew's state root read-only (the crew may be running in another process, or a
 * root on a read-only disk) and its crew file (CREW_INVALID as for crew run), for
 * `crew view` and `crew status`.
 */
export function openCrewConsole(options: { readonly file: string; readonly cwd: string; readonly env: NodeJS.ProcessEnv; readonly state: string | undefined; readonly stuckAfterS?: number; readonly pollMs?: number; readonly rehearse?: boolean }): CrewConsole {
  const read = loadCrew(options.file, options.cwd);
  // crew status --rehearse: the crew's rehearsal, kept under its own name and out.
  const loaded = options.rehearse === true ? rehearsalOf(read) : read;
  const extra = options.rehearse === true ? ['--rehearse'] : [];
  const root = configuredStateRoot(options.state, options.env, options.cwd)?.path ?? defaultStateRoot(options.cwd);
  const store = openStore(root, { readOnly: true });
  const retryCommand = retryAdvice(loaded.file, root, extra);
  const resumeCommand = resumeAdvice(loaded.file, root, extra);
  const titles = planTitles(loaded.lanes);
  const source: StoreSource = new StoreSource(
    store,
    { name: loaded.crew.crew, laneIds: loaded.lanes.map((lane) => lane.id), retryCommand, resumeCommand, answerCommand: answerAdvice(loaded.file, root, null), titles, capUsd: loaded.crew.limits.spend_cap_usd ?? null, reserveUsd: loaded.crew.limits.reserve_usd },
    {
      ...(options.stuckAfterS === undefined ? {} : { stuckAfterS: options.stuckAfterS }),
      ...(options.pollMs === undefined ? {} : { pollMs: options.pollMs }),
      laneStory: (id) =>
        titled(titles.get(id), readLaneStory(store, { crew: loaded.crew.crew, lane: id, retryCommand, resumeCommand, answerCommand: answerAdvice(loaded.file, root, id), callTimeoutMs: loaded.crew.limits.timeout_ms, crewStopped: source.runState() !== 'running', runDir: join(loaded.out, id), workspace: workspace(loaded), diffStat: true })),
    },
  );
  return { loaded, store, root, source };
}

/** A lane's story with its plan's title, when it has one. */
function titled(title: string | undefined, story: LaneStory | undefined): LaneStory | undefined {
  return story === undefined || title === undefined ? story : { ...story, title };
}
