import { join } from 'node:path';
import type { LaneSpec, Runners } from '../../formats/crew/file.ts';
import { isPresetRunner, type RunnerConfig } from '../../formats/providers/runner.ts';
import type { LoadedCrew } from '../crew/load-crew.ts';
import { acquireLock } from '../fs/file-lock.ts';
import { makeDirs } from '../fs/make-dirs.ts';
import { crewScript, fakeServerRunner } from '../model-server/crew-script.ts';
import { startModelServer, type ModelServer } from '../model-server/index.ts';

/** What a rehearsal adds to a crew's name and out: its lanes, branches and spend stay apart from the real crew's. */
export const REHEARSAL_SUFFIX = '-rehearsal';

/** Agent turns answered `STATUS: continue` before the model server's agents report done. */
const DONE_AT_TURN = 2;

const ROLES: readonly (keyof Runners)[] = ['native', 'outside', 'observer', 'agent'];

export interface Rehearsal {
  /** The model server's `http://127.0.0.1:PORT`. */
  readonly url: string;
  /** The crew as the rehearsal runs it: renamed, its own out, every preset pointed at the server. */
  apply(loaded: LoadedCrew, root: string): LoadedCrew;
  /** Stops the server and ends its open streams. */
  close(): Promise<void>;
}

/**
 * Starts the loopback model server a rehearsal runs against. Its replies come from each
 * prompt alone: reviews with no findings, passing verdicts, and agent turns that run one
 * shell command with the CLI's own tool in the lane's worktree, so every CLI and lane can
 * share it.
 */
export async function startRehearsal(): Promise<Rehearsal> {
  const server: ModelServer = await startModelServer(crewScript({ doneAt: DONE_AT_TURN }));
  const held: (() => void)[] = [];
  return {
    url: server.url,
    apply: (loaded, root) => {
      // The homes' config names this server's port: a second rehearsal of the same crew
      // on the same root would point the first one's CLIs at its own port, so it is
      // refused before it writes a byte (CREW_BUSY), as crew run refuses a second driver.
      const dir = rehearsalDir(root, loaded.crew.crew);
      makeDirs(dir);
      held.push(acquireLock(join(dir, 'lock'), { waitMs: 0, code: 'CREW_BUSY' }));
      return rehearsedCrew(loaded, root, server.url);
    },
    close: async () => {
      for (const release of held.splice(0)) release();
      await server.close();
    },
  };
}

/** Where a rehearsal of `crew` keeps its CLIs' homes (and its lock) in a state root. */
export function rehearsalDir(root: string, crew: string): string {
  return join(root, 'rehearsal', crew + REHEARSAL_SUFFIX);
}

/**
 * The crew renamed `<crew>-rehearsal` with out `<out>-rehearsal`: a rehearsal's lanes,
 * branches (laneward/<crew>-rehearsal/<lane>), run directories and spend never count as
 * the real crew's, so the real run that follows starts every lane. Preset runners get
 * the environment that points their CLI at `url` (a private HOME and config per role and
 * preset under `<root>/rehearsal/<crew>/homes`, a fake key), over their own `env`; argv
 * runners run as written.
 */
export function rehearsedCrew(loaded: LoadedCrew, root: string, url: string): LoadedCrew {
  const homes = join(rehearsalDir(root, loaded.crew.crew), 'homes');
  // One home per role and preset, written once however many lanes share it.
  const made = new Map<string, RunnerConfig>();
  const point = (role: keyof Runners, runner: RunnerConfig): RunnerConfig => {
    if (!isPresetRunner(runner)) return runner;
    const key = `${role}-${runner.preset}`;
    let wired = made.get(key);
    if (wired === undefined) {
      wired = fakeServerRunner(runner.preset, url, join(homes, key));
      made.set(key, wired);
    }
    const env = isPresetRunner(wired) ? wired.env : undefined;
    return { ...runner, env: { ...runner.env, ...env } };
  };
  const lanes: LaneSpec[] = loaded.lanes.map((lane) => ({
    ...lane,
    runners: Object.fromEntries(ROLES.map((role) => [role, point(role, lane.runners[role])])) as unknown as Runners,
  }));
  return { ...rehearsalOf(loaded), lanes };
}

/** The crew as its rehearsal is named and kept (`<crew>-rehearsal`, `<out>-rehearsal`), runners as written: what crew status --rehearse reads. */
export function rehearsalOf(loaded: LoadedCrew): LoadedCrew {
  return { ...loaded, crew: { ...loaded.crew, crew: loaded.crew.crew + REHEARSAL_SUFFIX }, out: loaded.out + REHEARSAL_SUFFIX };
}
