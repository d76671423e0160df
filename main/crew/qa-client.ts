import { Worker } from 'node:worker_threads';
import * as Comlink from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { BUILD_ID } from '../../formats/build-id.ts';
import type { Dispatcher } from '../dispatch/dispatcher.ts';
import { workerFile } from '../pool.ts';
import type { QaPort } from './ports.ts';
import type { QaConfig } from '../qa/qa-config.ts';
import type { ObserverSettings, QaRun, QaServiceApi } from './qa-service.ts';

export interface QaService extends QaPort {
  close(): Promise<void>;
}

/**
 * Starts the crew's QA service: one long-lived thread holding every lane's QA state
 * machine, called like an object through comlink, so the coordinator's event loop only
 * forwards calls. Its observer children are started back here, through `run`: they count
 * against the crew's one limit and are torn down by the dispatcher, never by this thread.
 */
export async function startQaService(root: string, supervise: Dispatcher['supervise'], config: QaConfig, observer: ObserverSettings): Promise<QaService> {
  const worker = new Worker(new URL(workerFile('qa-service')), { workerData: { buildId: BUILD_ID } });
  const remote = Comlink.wrap<QaServiceApi>(nodeEndpoint(worker));
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  let failure: Error | undefined;
  worker.once('error', (error) => (failure = error));
  const guard = async <T>(call: () => Promise<T>): Promise<T> => {
    if (failure !== undefined) throw failure;
    return call();
  };
  const qaRun: QaRun = (spec, onSpawn) => supervise(spec, onSpawn === undefined ? {} : { onSpawn: (child) => onSpawn(child) });
  await remote.init(root, Comlink.proxy(qaRun), config, observer);
  return {
    start: (lane, runner) => guard(() => remote.start(lane, Array.isArray(runner) ? [...runner] : runner)),
    turn: (lane, role, text, diff, key) => guard(() => remote.turn(lane, role, text, diff, key)),
    finish: (lane) => guard(() => remote.finish(lane)),
    stop: (lane) => guard(() => remote.stop(lane)),
    close: async () => {
      remote[Comlink.releaseProxy]();
      await worker.terminate();
      await exited;
    },
  };
}
