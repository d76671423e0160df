import type { QaEvent } from '../../formats/qa/events.ts';
import { transact, type Store } from '../store/store.ts';
import { bootstrap } from './bootstrap.ts';
import { checkLaneId } from './lane-id.ts';
import { report, type QaReport } from './report.ts';
import type { SuperviseFn } from './supervise-fn.ts';

export interface QaClearOptions {
  readonly cancel?: AbortSignal;
}

/**
 * Clears the lane's history in one transaction: turns, reasoning count, last-sent index,
 * cadence and review counters, transcript, frames; readiness is reset and the epoch bumped
 * (a call still running finds its history gone). Diff-bearing turns not yet covered by a
 * review request get a final one first.
 */
async function clear(store: Store, lane: string, reason: 'stop' | 'reset'): Promise<QaReport> {
  checkLaneId(lane);
  return transact(store, 'lanes', lane, (record) => {
    if (record === undefined) return { change: null, result: report(lane, 'QA_NO_OBSERVER', [], undefined, `no lane ${lane} in this state root`) };
    const events: QaEvent[] = [];
    if (record.unreviewedDiffs.length > 0) {
      const turns = record.unreviewedDiffs;
      events.push({ type: 'review_request', lane, reason: 'final', turns, summary: `${turns.length} diff-bearing turn(s) left unreviewed at ${reason}: ${turns.join(', ')}` });
    }
    events.push({ type: 'cleared', lane, reason, turns: record.turns.length, exchanges: record.transcript.length, frames: record.frames.length });
    record.state = reason === 'stop' ? 'stopped' : 'active';
    record.epoch += 1;
    record.ready = false;
    record.turns = [];
    record.reasoningTurns = 0;
    record.lastSent = 0;
    record.reserved = [];
    record.sinceCadence = 0;
    record.unreviewedDiffs = [];
    record.transcript = [];
    record.bootstrapLen = null;
    record.frames = [];
    return { change: { record, events }, result: report(lane, null, events, record) };
  });
}

/** `qa stop`: clears the history and stops the lane; it takes no turns until started again. */
export async function qaStop(store: Store, lane: string, _options: QaClearOptions, _run: SuperviseFn): Promise<QaReport> {
  return clear(store, lane, 'stop');
}

/** `qa reset`: clears the history and bootstraps the observer again before cadence resumes. */
export async function qaReset(store: Store, lane: string, options: QaClearOptions, supervise: SuperviseFn): Promise<QaReport> {
  const cleared = await clear(store, lane, 'reset');
  if (cleared.code !== null) return cleared;
  return bootstrap(store, lane, supervise, cleared.events, options.cancel);
}
