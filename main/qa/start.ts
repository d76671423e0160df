import type { QaEvent } from '../../formats/qa/events.ts';
import type { LaneRecord, ObserverConfig } from '../../formats/qa/record.ts';
import { isToolEventFormat } from '../../formats/supervision/tool-policy.ts';
import { isDescriptorRefusal, loadVerifiedAction } from '../actions/load-descriptor.ts';
import { progressFor } from '../../formats/providers/presets.ts';
import { transact, type Store } from '../store/store.ts';
import { bootstrap } from './bootstrap.ts';
import { sweepStaleCalls } from './call-dirs.ts';
import { keptDirs } from './reservations.ts';
import { settleOrphanedCalls } from './settle-calls.ts';
import { checkLaneId } from './lane-id.ts';
import { report, type QaReport } from './report.ts';
import type { SuperviseFn } from './supervise-fn.ts';

export interface QaStartOptions {
  readonly observer: ObserverConfig;
  readonly cancel?: AbortSignal;
}

/** A fresh lane record: active, not ready, no history. */
export function freshLane(lane: string, observer: ObserverConfig, previous: LaneRecord | undefined): LaneRecord {
  return {
    version: 1,
    lane,
    seq: previous?.seq ?? 0,
    state: 'active',
    epoch: (previous?.epoch ?? -1) + 1,
    observer,
    ready: false,
    calls: previous?.calls ?? 0,
    turns: [],
    reasoningTurns: 0,
    lastSent: 0,
    sinceCadence: 0,
    unreviewedDiffs: [],
    transcript: [],
    bootstrapLen: null,
    frames: [],
  };
}

/**
 * `qa start`: records the lane and its observer, then runs the bootstrap. The observer's
 * action is verified first, and must name a progress source whose events name tools (the
 * tool policy is enforced from them): else nothing is recorded (DESCRIPTOR_INVALID,
 * QA_POLICY_UNENFORCEABLE). A lane that is active and ready is refused (QA_LANE_ACTIVE);
 * an active lane whose bootstrap did not pass keeps its turns and bootstraps again; a
 * stopped or complete lane starts over.
 */
export async function qaStart(store: Store, lane: string, options: QaStartOptions, supervise: SuperviseFn): Promise<QaReport> {
  checkLaneId(lane);
  // A bootstrap a killed process left running is adopted (or read) first: when it passed,
  // the lane is ready and this start is its end, its prompt never sent a second time.
  const settled = await settleOrphanedCalls(store, lane, supervise, options.cancel);
  const now = store.lanes.get(lane);
  // A bootstrap settled here is this start's answer (ready, or its failure), unless it was lost.
  const answered = settled.findLast((e) => e.type === 'ready' || (e.type === 'observer_failed' && e.mode === 'bootstrap' && e.code !== 'EXECUTION_UNKNOWN'));
  if (answered?.type === 'ready' && now?.state === 'active' && now.ready) return report(lane, null, settled, now);
  if (answered?.type === 'observer_failed') return report(lane, answered.code as QaReport['code'], settled, now, answered.detail);
  // Calls of a killed process left their directories: gone before this command makes any.
  sweepStaleCalls(store.root, lane, keptDirs(now));
  const { observer } = options;
  let progress: unknown;
  try {
    const { spec } = loadVerifiedAction(observer.actionsFile, observer.trust, observer.action);
    // Progress left to the preset is the preset's own stream format.
    progress = spec.timeout_mode === 'admitted_progress_inactivity' ? progressFor(spec.progress, observer.preset?.preset) : null;
  } catch (error) {
    if (isDescriptorRefusal(error)) return report(lane, error.code, [], undefined, error.message);
    throw error;
  }
  if (!isToolEventFormat(progress)) {
    return report(lane, 'QA_POLICY_UNENFORCEABLE', [], undefined, `action ${observer.action} has progress ${typeof progress === 'string' ? progress : 'none (total_deadline)'}`);
  }
  const started = await transact(store, 'lanes', lane, (current) => {
    if (current?.state === 'active' && current.ready) return { change: null, result: report(lane, 'QA_LANE_ACTIVE', [], current, `lane ${lane} is active and ready`) };
    let record: LaneRecord;
    if (current?.state === 'active') {
      record = current;
      record.observer = observer;
    } else {
      record = freshLane(lane, observer, current);
    }
    const event: QaEvent = { type: 'started', lane, action: observer.action };
    return { change: { record, events: [event] }, result: report(lane, null, [event], record) };
  });
  if (started.code !== null) return started;
  return bootstrap(store, lane, supervise, [...settled, ...started.events], options.cancel);
}
