import type { SuperviseFn } from '../dispatch/dispatcher.ts';
import { supervise } from '../../workers/supervise/supervise.ts';

export type { RunOptions, SuperviseFn } from '../dispatch/dispatcher.ts';

/** Supervises in this thread, one child per call (the `qa` CLI); the crew passes its dispatcher's `run`. */
export const inProcessSupervise: SuperviseFn = (spec, options) => supervise(spec, options?.cancel);
