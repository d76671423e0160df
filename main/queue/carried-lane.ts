import { join } from 'node:path';
import { isLanewardError, toError } from '../../formats/codes/error.ts';
import type { LaneProgress } from '../../formats/crew/record.ts';
import { oneLine } from '../../formats/text/one-line.ts';
import type { Store } from '../store/store.ts';
import type { LoadedCrew } from '../crew/load-crew.ts';
import { validateRun } from '../../workers/validate/validate-run.ts';
import type { LaneJobResult } from './crew-worker.ts';
import { laneProgressFrom } from './lane-result.ts';
import { DEFAULT_MAX_ARTIFACT_BYTES, unpackRunDir } from './run-dir-transfer.ts';

/** A lane this coordinator fails itself: its job ended with no result it can take. */
export function failedLane(crew: string, lane: string, dir: string, code: string, detail: string): LaneProgress {
  const now = new Date().toISOString();
  return { crew, lane, stage: 'failed', runDir: dir, turnsDispatched: 0, turnsDone: 0, lostTurns: [], guidance: null, attempts: 0, stoppedIn: null, code, detail, updatedAt: now, stages: [{ stage: 'failed', at: now }] };
}

/**
 * A lane's job as it ended, taken as this coordinator's lane: its result checked whole (a
 * lane's progress, and a run directory that is a list of files, or none: a failed lane's
 * that was too large), the run directory unpacked into `dir` and validated here (a
 * complete lane carries one that is valid here), or a failure the job reported, typed.
 */
export function carriedLane(input: { readonly crew: string; readonly lane: string; readonly dir: string; readonly result: LaneJobResult | null; readonly failure: string | null; readonly maxArtifactBytes?: number }): LaneProgress {
  const { crew, lane, dir, result, failure } = input;
  if (result === null || typeof result !== 'object') {
    const code = /^([A-Z][A-Z_]+): /.exec(failure ?? '')?.[1] ?? 'INTERNAL';
    return failedLane(crew, lane, dir, code, oneLine(failure ?? 'the lane job ended with no result'));
  }
  const reported = laneProgressFrom(result.progress, crew, lane, dir);
  const files: unknown = (result as { files?: unknown }).files;
  if (reported === null) return failedLane(crew, lane, dir, 'JOB_INVALID', 'the worker\'s result for this lane is not a lane\'s progress');
  if (files !== null && !Array.isArray(files)) return failedLane(crew, lane, dir, 'JOB_INVALID', 'the worker\'s result for this lane carries a run directory that is not a list of files');
  if (files === null && reported.stage === 'complete') return failedLane(crew, lane, dir, 'JOB_INVALID', 'the worker\'s result says the lane is complete and carries no run directory');
  if (!Array.isArray(files)) return reported;
  try {
    unpackRunDir(files as LaneJobResult['files'] & unknown[], dir, input.maxArtifactBytes ?? DEFAULT_MAX_ARTIFACT_BYTES);
    const validation = validateRun(dir);
    if (!validation.valid && reported.stage === 'complete') {
      const code = Object.keys(validation.codes)[0] ?? 'ARTIFACT_SCHEMA';
      return { ...reported, stage: 'failed', code, detail: `its run directory, carried back, is not valid here (${Object.entries(validation.codes).map(([c, n]) => `${c}=${n}`).join(' ')})` };
    }
    return reported;
  } catch (error) {
    const code = isLanewardError(error) ? error.code : 'INTERNAL';
    return { ...reported, stage: 'failed', code, detail: oneLine(toError(error).message) };
  }
}

/**
 * Lanes this coordinator already took a result of, not queued again (a job may be gone
 * from Redis, removed or cleaned): a complete one whose run directory is here and valid,
 * or a failed one when no retry is asked for.
 */
export function heldLanes(store: Store, loaded: LoadedCrew, retryFailed: boolean): Map<string, LaneProgress> {
  const held = new Map<string, LaneProgress>();
  for (const lane of loaded.lanes) {
    const dir = join(loaded.out, lane.id);
    const progress = store.crewLanes.get([loaded.crew.crew, lane.id]);
    if (progress === undefined || progress.runDir !== dir) continue;
    if (progress.stage === 'failed' && !retryFailed) held.set(lane.id, progress);
    else if (progress.stage === 'complete') {
      try {
        if (validateRun(dir).valid) held.set(lane.id, progress);
      } catch {
        // Not a run directory here: the lane is asked of the queue again.
      }
    }
  }
  return held;
}
