import type { Outcome } from '../../workers/supervise/outcome.ts';
import type { SupervisionSpec } from '../../workers/supervise/spec.ts';
import { supervise } from '../../workers/supervise/supervise.ts';

/** What a caller may pass with one supervised run. */
export interface RunOptions {
  readonly cancel?: AbortSignal;
}

/**
 * The one way main runs a supervised child: an Outcome for every case, never a rejection
 * for a provider failure. The crew passes its dispatcher's `run` (through comlink when
 * the QA functions live in a worker thread); the CLI passes {@link inProcessSupervise}.
 */
export type SuperviseFn = (spec: SupervisionSpec, options?: RunOptions) => Promise<Outcome>;

/** Supervises in this thread, one child per call. */
export const inProcessSupervise: SuperviseFn = (spec, options) => supervise(spec, options?.cancel);
