import { join } from 'node:path';
import type { LaneSpec } from '../../formats/crew/file.ts';
import type { LaneProgress } from '../../formats/crew/record.ts';
import type { SupervisionSpec } from '../../workers/supervise/spec.ts';
import { launchOf, launchSpec, type Launch } from '../providers/launch.ts';
import type { CrewActions } from './crew-actions.ts';

/** The files of a lane's agent turn `n`, in its run directory. */
export interface TurnFiles {
  readonly prompt: string;
  readonly result: string;
  /** The agent's stdout, written by the agent itself (a preset's stream). */
  readonly stream: string;
  readonly stderr: string;
}

export function turnFiles(progress: LaneProgress, n: number): TurnFiles {
  const dir = join(progress.runDir, 'agent');
  return { prompt: join(dir, `turn-${n}.prompt.md`), result: join(dir, `turn-${n}.json`), stream: join(dir, `turn-${n}.stream.jsonl`), stderr: join(dir, `turn-${n}.stderr`) };
}

/**
 * The spec agent turn `n` of a lane runs under: the agent's output goes to the turn's
 * files, which it holds itself, so what it streams (its session, reply and cost) is there
 * for a crew started after this one died, and the agent, orphaned, is adopted by
 * following them. The same spec adopts it (nothing of it but the files is used then).
 */
export function turnSpec(actions: CrewActions, lane: LaneSpec, progress: LaneProgress, n: number, contained = false): { readonly spec: SupervisionSpec; readonly launch: Launch; readonly files: TurnFiles } {
  const files = turnFiles(progress, n);
  const launch = launchOf(lane.runners.agent, { role: 'agent', prompt: files.prompt, result: files.result, lane: lane.id, resume: progress.session ?? null, contained });
  const base = actions.spec('agent', launch.argv);
  // The result file names the turn: a crew started after this one died finds the agent by it.
  const spec: SupervisionSpec = {
    ...launchSpec(base, launch, { LANEWARD_PROMPT_FILE: files.prompt, LANEWARD_RESULT_FILE: files.result }),
    ...(base.stdio === 'pipe' ? { stdoutFile: files.stream, stderrFile: files.stderr } : {}),
  };
  return { spec, launch, files };
}
