import { parentPort, workerData } from 'node:worker_threads';
import * as Comlink from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { BUILD_ID } from '../../formats/build-id.ts';
import type { Dispatcher } from '../dispatch/dispatcher.ts';
import type { QaStep } from './ports.ts';

/** The QA service's surface, as the coordinator calls it through comlink. */
export interface QaServiceApi {
  init(root: string, run: Dispatcher['run'], knobs: Record<string, string>): Promise<void>;
  start(lane: string, observer: string[], workDir: string): Promise<QaStep>;
  turn(lane: string, role: 'user' | 'assistant', text: string, diff: boolean): Promise<QaStep>;
  finish(lane: string): Promise<QaStep>;
}

const expected = (workerData as { buildId?: unknown } | undefined)?.buildId;
if (expected !== BUILD_ID) throw new Error(`qa-service is build ${BUILD_ID}, coordinator expects ${String(expected)}`);

// TODO(crew): the QA state machine calls land with main/qa.
const api: QaServiceApi = {
  async init() {},
  async start() {
    throw new Error('not built');
  },
  async turn() {
    throw new Error('not built');
  },
  async finish() {
    throw new Error('not built');
  },
};

Comlink.expose(api, nodeEndpoint(parentPort!));
