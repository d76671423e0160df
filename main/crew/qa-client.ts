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
 * The QA thread of one state root, which crews use as tenants: a queue worker keeps one
 * for its life and each lane job's crew opens a tenant on it, so no job starts a thread
 * of its own. `root` is the state root its store is.
 */
export interface QaThread {
  readonly root: string;
  /** True once the thread died (an error outside any call): every call of it throws that error. */
  failed(): boolean;
  tenant(supervise: Dispatcher['supervise'], config: QaConfig, observer: ObserverSettings): Promise<QaService>;
  close(): Promise<void>;
}

/**
 * Starts the QA thread of `root`: one long-lived thread holding every lane's QA state
 * machine, called like an object through comlink, so the coordinator's event loop only
 * forwards calls. Its observer children are started back here, through each tenant's
 * supervise function: they count against that crew's one limit and are torn down by its
 * dispatcher, never by the thread.
 */
export async function startQaThread(root: string): Promise<QaThread> {
  const worker = new Worker(new URL(workerFile('qa-service')), { workerData: { buildId: BUILD_ID } });
  const remote = Comlink.wrap<QaServiceApi>(nodeEndpoint(worker));
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  let failure: Error | undefined;
  worker.once('error', (error) => (failure = error));
  const guard = async <T>(call: () => Promise<T>): Promise<T> => {
    if (failure !== undefined) throw failure;
    return call();
  };
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      remote[Comlink.releaseProxy]();
      await worker.terminate();
      await exited;
    })());
  try {
    await remote.init(root);
  } catch (error) {
    await close();
    throw error;
  }
  let tenants = 0;
  return {
    root,
    failed: () => failure !== undefined,
    async tenant(supervise, config, observer) {
      const id = ++tenants;
      const qaRun: QaRun = (spec, onSpawn) => supervise(spec, onSpawn === undefined ? {} : { onSpawn: (child) => onSpawn(child) });
      await guard(() => remote.open(id, Comlink.proxy(qaRun), config, observer));
      return {
        start: (lane, runner) => guard(() => remote.start(id, lane, Array.isArray(runner) ? [...runner] : runner)),
        turn: (lane, role, text, diff, key) => guard(() => remote.turn(id, lane, role, text, diff, key)),
        finish: (lane) => guard(() => remote.finish(id, lane)),
        stop: (lane) => guard(() => remote.stop(id, lane)),
        // The tenant only: the thread serves the crews still open on it.
        close: async () => {
          if (failure === undefined && closing === undefined) await remote.release(id).catch(() => undefined);
        },
      };
    },
    close,
  };
}

/**
 * A QA thread of `root` for a process that runs crew after crew on it (a queue worker):
 * one that died is replaced at the next crew's start, so it fails the lanes it held then,
 * never every lane after them.
 */
export function lastingQaThread(first: QaThread, start: (root: string) => Promise<QaThread> = startQaThread): QaThread {
  let current = first;
  let replacing: Promise<QaThread> | undefined;
  const live = async (): Promise<QaThread> => {
    if (!current.failed()) return current;
    replacing ??= (async () => {
      await current.close();
      current = await start(current.root);
      return current;
    })().finally(() => (replacing = undefined));
    return replacing;
  };
  return {
    root: first.root,
    failed: () => current.failed(),
    tenant: async (supervise, config, observer) => (await live()).tenant(supervise, config, observer),
    close: () => current.close(),
  };
}

/** A QA thread of `root` with one tenant, the crew's own: its close ends the thread. */
export async function startQaService(root: string, supervise: Dispatcher['supervise'], config: QaConfig, observer: ObserverSettings): Promise<QaService> {
  const thread = await startQaThread(root);
  try {
    const tenant = await thread.tenant(supervise, config, observer);
    return { ...tenant, close: () => thread.close() };
  } catch (error) {
    await thread.close();
    throw error;
  }
}
