import { existsSync } from 'node:fs';
import type { QaEvent } from '../../formats/qa/events.ts';
import type { ObserverConfig, Reservation } from '../../formats/qa/record.ts';
import type { ChildRecord } from '../../formats/supervision/child-record.ts';
import { findLiveByEnv } from '../../workers/supervise/find-by-env.ts';
import { nowMs } from '../../workers/supervise/monotonic-timer.ts';
import { buildOutcome, type Outcome } from '../../workers/supervise/outcome.ts';
import type { SupervisionSpec } from '../../workers/supervise/spec.ts';
import { adoptionSpec } from '../dispatch/orphans.ts';
import { streamEnd } from '../providers/stream-facts.ts';
import { holderAlive } from '../process/process-alive.ts';
import { transact, type Store } from '../store/store.ts';
import { callFacts } from './apply-call.ts';
import { removeCallDir } from './call-dirs.ts';
import { callFiles, callSpec, concludeCall, type ObserverResult } from './observer-call.ts';
import { recordEnd } from './record-end.ts';
import { releaseDelta, takeOver } from './reservations.ts';
import type { SuperviseFn } from './supervise-fn.ts';

/**
 * Settles the observer calls of `lane` whose process died before recording their end
 * (a crew or a `qa` command killed mid-call), before the lane decides anything new. Each
 * is taken over in a transaction (never by two processes), then settled the way a crew's
 * orphaned reviewers and agent turns are (one mechanism, {@link adoptionSpec}): an
 * observer still running is adopted (its stream followed from its start, its lease
 * renewed from it, its tool policy enforced, its verdict, session and cost taken at its
 * end); one that ended is read from its stream file. Its end is then recorded as if its
 * own process had recorded it: its turns count as judged, and no prompt goes out twice.
 * Only a call whose stream tells nothing conclusive (never spawned, or cut short) is
 * lost: said so (EXECUTION_UNKNOWN), and its turns are given back to the next decision.
 * Returns the events recorded, in order.
 */
export async function settleOrphanedCalls(store: Store, lane: string, supervise: SuperviseFn, cancel?: AbortSignal): Promise<QaEvent[]> {
  // Read before the transactions (a transaction step reads nothing of the world).
  const dead = (store.lanes.get(lane)?.reserved ?? []).filter((r) => r.dir !== undefined && !holderAlive(r.owner));
  const events: QaEvent[] = [];
  for (const orphan of dead) {
    const taken = await transact(store, 'lanes', lane, (record) => {
      const mine = record === undefined ? undefined : takeOver(record, orphan.call, orphan.owner);
      if (record === undefined || mine === undefined) return { change: null, result: undefined };
      return { change: { record, events: [] }, result: { reservation: mine, epoch: record.epoch, observer: record.observer } };
    });
    if (taken === undefined) continue;
    const { reservation } = taken;
    const result = await settleCall(store.root, lane, taken.observer, reservation, supervise, cancel);
    const at = new Date().toISOString();
    const event = await transact(store, 'lanes', lane, (record) => {
      // A stop or reset since: the call's history is gone with it.
      if (record === undefined || record.epoch !== taken.epoch) return { change: null, result: undefined };
      if (result.started) {
        const { event: recorded } = recordEnd(record, result, reservation.ranges, at);
        return { change: { record, events: [recorded] }, result: recorded };
      }
      // Lost: its turns go back to the next decision, and the transcript (what the
      // cross-check reads) gains no exchange, as nothing was judged; the journal says so.
      releaseDelta(record, result.call, false);
      const lost: QaEvent = { type: 'observer_failed', lane, mode: result.mode, call: result.call, code: 'EXECUTION_UNKNOWN', detail: result.detail, ...callFacts(result, at) };
      return { change: { record, events: [lost] }, result: lost };
    });
    removeCallDir(store.root, lane, reservation.dir!);
    if (event !== undefined) events.push(event);
  }
  return events;
}

/** The end of one orphaned call: adopted or read from its stream, or lost (`started` false, its turns given back). */
async function settleCall(root: string, lane: string, observer: ObserverConfig, reservation: Reservation, supervise: SuperviseFn, cancel: AbortSignal | undefined): Promise<ObserverResult> {
  const files = callFiles(root, lane, reservation.dir!);
  const startedAtIso = reservation.child?.at ?? new Date().toISOString();
  const ready = callSpec(lane, observer, reservation.call, reservation.mode, files, nowMs());
  const lost = (why: string, from: Pick<ObserverResult, 'frames' | 'outcome'>): ObserverResult => ({
    call: reservation.call,
    mode: reservation.mode,
    verdict: null,
    code: 'EXECUTION_UNKNOWN',
    detail: `observer call ${reservation.call} (${reservation.mode}) was lost with the process that ran it: ${why}; its turns go to the next call`,
    started: false,
    startedAt: startedAtIso,
    frames: from.frames,
    outcome: from.outcome,
  });
  if ('refused' in ready) return lost(ready.refused.detail, { frames: [], outcome: ready.refused.outcome });
  // Killed between its spawn and the journal: found by its environment (its prompt's path names its call).
  const found = findLiveByEnv('LANEWARD_QA_PROMPT', files.prompt);
  const child: ChildRecord | undefined =
    reservation.child ?? (found === undefined ? undefined : { pid: found.pid, pgid: found.pgid, ticks: found.ticks, at: startedAtIso, mode: ready.spec.mode, deadline_at: null, reads_output: true, follows_file: true });
  // A call that never got its observer going wrote nothing, and nothing runs: it was never sent.
  const ref = child ?? (existsSync(files.stdout) ? ({ pid: 0, pgid: 0, ticks: -1, at: startedAtIso, mode: ready.spec.mode, deadline_at: null, reads_output: true, follows_file: true } as const) : undefined);
  if (ref === undefined) return lost('its observer never wrote a stream', { frames: [], outcome: neverWrote(ready.spec) });
  // Followed while it runs; one that ended meanwhile is read from its stream file whole.
  const outcome = await supervise(adoptionSpec(ready.spec, ref), cancel === undefined ? {} : { cancel });
  const result = concludeCall(reservation.call, reservation.mode, files, ready, { ...outcome, providerStarted: true }, startedAtIso);
  // An orphan's exit status is not ours to read: with no verdict, only its stream can say how it ended.
  const conclusive = result.verdict !== null || outcome.code !== null || (ready.launch.provider !== undefined && streamEnd(outcome.provider) !== null);
  return conclusive ? result : lost(`its stream tells nothing conclusive (${result.detail})`, result);
}


/** The supervision of a call whose observer left no stream and does not run: as far as anyone can tell, it never started. */
function neverWrote(spec: SupervisionSpec): Outcome {
  return buildOutcome({
    code: 'SPAWN_FAILED',
    action: spec.action,
    timeoutMode: spec.mode,
    descriptorSha256: spec.descriptorSha256,
    childExitCode: null,
    signal: null,
    cancelSignal: null,
    spawnError: 'no stream and no process: its supervisor died before or at the spawn',
    providerStarted: false,
    attempts: 0,
    marks: 0,
    durationMs: 0,
    cleanupConfirmed: true,
    expiryLateMs: null,
    firstSignalMs: null,
    goneMs: null,
    deniedTool: null,
  });
}
