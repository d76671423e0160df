import type { SuperviseFn } from '../dispatch/dispatcher.ts';
import { supervise } from '../../workers/supervise/supervise.ts';

export type { SuperviseOptions, SuperviseFn } from '../dispatch/dispatcher.ts';

/**
 * Supervises in this thread, one child per call (the `qa` CLI); the crew passes its
 * dispatcher's `run`. The spawn is reported as the dispatcher reports it: the observer
 * call journals its child there (and awaits that journal itself).
 */
export const inProcessSupervise: SuperviseFn = (spec, options) => {
  const onSpawn = options?.onSpawn;
  return supervise(spec, options?.cancel, onSpawn === undefined ? {} : { onSpawn: (_pid, child) => void onSpawn(child) });
};
