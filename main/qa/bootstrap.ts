import type { QaEvent } from '../../formats/qa/events.ts';
import type { Store } from '../store/store.ts';
import { transactLane } from '../store/store.ts';
import { applyCall, callFacts } from './apply-call.ts';
import { callObserver } from './observer-call.ts';
import { renderObserverPrompt } from './observer-prompt.ts';
import { report, type QaReport } from './report.ts';
import type { SuperviseFn } from './supervise-fn.ts';

/**
 * Runs the observer's bootstrap (a read-only scan) and records its end: a passing verdict
 * sets readiness and the bootstrap length of the transcript; anything else leaves the lane
 * not ready, so cadence stays paused. `prior` are the events the caller already committed.
 */
export async function bootstrap(store: Store, lane: string, run: SuperviseFn, prior: readonly QaEvent[], cancel?: AbortSignal): Promise<QaReport> {
  const begun = await transactLane(store, lane, (record) => {
    if (record === undefined) return { change: null, result: undefined };
    record.calls += 1;
    return { change: { record, events: [] }, result: { call: record.calls, epoch: record.epoch, observer: record.observer, at: record.lastSent } };
  });
  if (begun === undefined) return report(lane, 'QA_NO_OBSERVER', prior, undefined);
  const prompt = renderObserverPrompt({ lane, mode: 'bootstrap', delta: [], transcript: [] });
  const result = await callObserver(store.root, lane, begun.observer, begun.call, 'bootstrap', prompt, run, cancel);
  const facts = callFacts(result, new Date().toISOString());
  return transactLane(store, lane, (record) => {
    // A stop or reset while the call ran cleared the history it would join.
    if (record === undefined || record.epoch !== begun.epoch) return { change: null, result: report(lane, 'QA_NOT_BOOTSTRAPPED', prior, record) };
    applyCall(record, result, []);
    let event: QaEvent;
    if (result.verdict?.verdict === 'pass') {
      record.ready = true;
      record.bootstrapLen = record.transcript.length;
      event = { type: 'ready', lane, call: result.call, note: result.verdict.note, ...facts };
    } else {
      const code = result.code ?? 'QA_BOOTSTRAP_FAILED';
      event = { type: 'observer_failed', lane, mode: 'bootstrap', call: result.call, code, detail: result.verdict?.guidance ?? result.detail, ...facts };
    }
    const code = event.type === 'ready' ? null : (result.code ?? 'QA_BOOTSTRAP_FAILED');
    return { change: { record, events: [event] }, result: report(lane, code, [...prior, event], record, event.type === 'ready' ? '' : event.detail) };
  });
}
