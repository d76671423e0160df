import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { LanewardError } from '../../formats/codes/error.ts';
import type { RunRecord } from '../../formats/review/run-record.ts';
import type { Store } from '../store/store.ts';
import { openStateRoot } from './state-root.ts';
import { readBinding, stateRootFor, type RunBinding } from './run-binding.ts';
import type { PlanEnv } from './settings.ts';

export type { PlanEnv };

export interface Located {
  readonly runDir: string;
  readonly binding: RunBinding;
  readonly store: Store;
  readonly record: RunRecord;
}

/** Finds the run a command names by --out: its binding, its state root and its record. */
export function locateRun(out: string | undefined, planEnv: PlanEnv, mode: 'write' | 'read' = 'write'): Located {
  const runDir = runDirOf(out, planEnv);
  const binding = readBinding(runDir);
  if (binding === undefined) {
    throw new LanewardError('RUN_NOT_INITIALIZED', `${runDir} holds no laneward run (no .laneward-run)`, { path: runDir });
  }
  const store = openStateRoot(stateRootFor(planEnv.settings.stateRoot, binding, planEnv.cwd), mode);
  const record = store.runs.get(binding.run);
  if (record === undefined) {
    throw new LanewardError('RUN_NOT_INITIALIZED', `run ${binding.run} is not in state root ${store.root}`, { path: runDir });
  }
  return { runDir, binding, store, record };
}

export function runDirOf(out: string | undefined, planEnv: PlanEnv): string {
  if (out === undefined || out === '') throw new LanewardError('USAGE', '--out <run dir> is required');
  const dir = resolve(planEnv.cwd, out);
  const stat = statSync(dir, { throwIfNoEntry: false });
  if (stat !== undefined && !stat.isDirectory()) throw new LanewardError('USAGE', `--out ${dir} is not a directory`);
  return dir;
}
