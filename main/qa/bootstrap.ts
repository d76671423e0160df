import { randomUUID } from 'node:crypto';
import type { QaEvent } from '../../formats/qa/events.ts';
import type { Store } from '../store/store.ts';
import { transact } from '../store/store.ts';
import { callDirName, removeCallDir } from './call-dirs.ts';
import { callObserver } from './observer-call.ts';
import { renderObserverPrompt } from './observer-prompt.ts';
import { recordEnd } from './record-end.ts';
import { report, type QaReport } from './report.ts';
import { reserveCall } from './reservations.ts';
import type { SuperviseFn } from './supervise-fn.ts';

/**
 * Runs the observer's bootstrap (a read-only scan) and records its end: a passing verdict
 * sets readiness and the bootstrap length of the transcript; anything else leaves the lane
 * not ready, so cadence stays paused. `prior` are the events the caller already committed.
 * The call is reserved (its directory named) before its observer is spawned, so that a
 * process killed meanwhile leaves it for the next one to settle, never to send again.
 */
export async function bootstrap(store: Store, lane: string, supervise: SuperviseFn, prior: readonly QaEvent[], cancel?: AbortSignal): Promise<QaReport> {
  const nonce = randomUUID();
  const begun = await transact(store, 'lanes', lane, (record) => {
    if (record === undefined) return { change: null, result: undefined };
    record.calls += 1;
    const dir = callDirName(record.calls, nonce);
    reserveCall(record, record.calls, 'bootstrap', dir);
    return { change: { record, events: [] }, result: { call: record.calls, epoch: record.epoch, observer: record.observer, dir } };
  });
  if (begun === undefined) return report(lane, 'QA_NO_OBSERVER', prior, undefined);
  const prompt = renderObserverPrompt({ lane, mode: 'bootstrap', delta: [], transcript: [] });
  const result = await callObserver(store, lane, begun.observer, begun.call, 'bootstrap', begun.dir, prompt, supervise, cancel);
  const at = new Date().toISOString();
  const ended = await transact(store, 'lanes', lane, (record) => {
    // A stop or reset while the call ran cleared the history it would join.
    if (record === undefined || record.epoch !== begun.epoch) return { change: null, result: report(lane, 'QA_NOT_BOOTSTRAPPED', prior, record) };
    const { event, code, detail } = recordEnd(record, result, [], at);
    return { change: { record, events: [event] }, result: report(lane, code, [...prior, event], record, detail) };
  });
  removeCallDir(store.root, lane, begun.dir);
  return ended;
}
