import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { LanewardError } from '../../formats/error.ts';
import type { RunRecord } from '../../formats/review-run.ts';
import type { Store } from '../store/store.ts';
import { openStateRoot } from './state-root.ts';
import { readBinding, stateRootFor, type RunBinding } from './run-binding.ts';

export interface PlanEnv {
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  /** --state, when given. */
  readonly state: string | undefined;
}

export interface Located {
  readonly runDir: string;
  readonly binding: RunBinding;
  readonly store: Store;
  readonly record: RunRecord;
}

/** Finds the run a command names by --out: its binding, its state root and its record. */
export function locateRun(out: string | undefined, penv: PlanEnv, mode: 'write' | 'read' = 'write'): Located {
  const runDir = runDirOf(out, penv);
  const binding = readBinding(runDir);
  if (binding === undefined) {
    throw new LanewardError('RUN_NOT_INITIALIZED', `${runDir} holds no laneward run (no .laneward-run)`, { path: runDir });
  }
  const store = openStateRoot(stateRootFor(penv.state, penv.env, binding, penv.cwd), mode);
  const record = store.runs.get(binding.run);
  if (record === undefined) {
    throw new LanewardError('RUN_NOT_INITIALIZED', `run ${binding.run} is not in state root ${store.root}`, { path: runDir });
  }
  return { runDir, binding, store, record };
}

export function runDirOf(out: string | undefined, penv: PlanEnv): string {
  if (out === undefined || out === '') throw new LanewardError('USAGE', '--out <run dir> is required');
  const dir = resolve(penv.cwd, out);
  const stat = statSync(dir, { throwIfNoEntry: false });
  if (stat !== undefined && !stat.isDirectory()) throw new LanewardError('USAGE', `--out ${dir} is not a directory`);
  return dir;
}

/**
 * LANEWARD_EPHEMERAL: `1` is ephemeral, `0` or unset durable; anything else (`yes`,
 * `true`) is refused rather than silently taken as durable.
 */
export function durable(env: NodeJS.ProcessEnv): boolean {
  const raw = env['LANEWARD_EPHEMERAL'];
  if (raw === undefined || raw === '' || raw === '0') return true;
  if (raw === '1') return false;
  throw new LanewardError('USAGE', `LANEWARD_EPHEMERAL must be 1 (ephemeral) or 0 (durable, the default), got ${JSON.stringify(raw)}`, { path: 'LANEWARD_EPHEMERAL' });
}
