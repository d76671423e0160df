import type { LaneProgress } from '../../formats/crew/record.ts';
import type { CrewWords } from '../crew/crew-output.ts';
import type { CarriedFile } from './run-dir-transfer.ts';

export interface CrewWorkerOptions {
  readonly queue: string;
  readonly trust: string;
  readonly state: string | undefined;
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  /** Lanes at once. */
  readonly concurrency: number;
  /** Supervision threads of the worker's one pool, which every lane's dispatcher runs on. */
  readonly threads: number;
  readonly maxArtifactBytes: number;
  /** How long a lane's lock lasts without renewal: a worker silent this long is taken for lost. */
  readonly lockMs: number;
  /** Stops taking lanes; the running ones finish. */
  readonly cancel: AbortSignal;
}

/** What a lane job returns to its coordinator. */
export interface LaneJobResult {
  readonly progress: LaneProgress;
  readonly files: readonly CarriedFile[] | null;
  /** Which worker ran it. */
  readonly worker: string;
}

/**
 * What a crew worker reports, as facts (main/cli/crew-worker-lines.ts words them): that it
 * takes jobs, each job's end (its lane's stage and code, or the code it refused or released
 * it with), a lane that waits for its coordinator to copy its records before its next
 * child, and an error of its queue client.
 */
export type CrewWorkerEvent =
  | { readonly type: 'ready'; readonly queue: string; readonly worker: string; readonly concurrency: number; readonly root: string }
  | { readonly type: 'lane_ended'; readonly job: string; readonly lane: string; readonly stage: string; readonly code: string | null }
  | { readonly type: 'released'; readonly job: string; readonly code: string }
  | { readonly type: 'refused'; readonly job: string; readonly code: string }
  | { readonly type: 'coordinator_wait'; readonly job: string; readonly lane: string }
  | { readonly type: 'queue_error'; readonly message: string };

/** Where a crew worker reports: its events, and the words its lanes' progress keeps. */
export interface CrewWorkerOutput {
  event(event: CrewWorkerEvent): void;
  readonly words: CrewWords;
}
