import { LanewardError } from '../../formats/error.ts';
import type { AttemptRecord, JournalEvent, RunRecord } from '../../formats/review-run.ts';
import { processAlive, processStart } from '../artifact/process-alive.ts';
import { transact } from '../store/store.ts';
import { checkpointAfter } from './checkpoint.ts';
import { describeRun } from './describe.ts';
import { locateRun, type PlanEnv } from './locate.ts';
import { attemptOf, closeIfDone, phaseOf, type Step } from './machine.ts';
import { emptyReport, terminalStatus, type PlanReport } from './report.ts';
import { syncRunFiles } from './run-files.ts';
import { release, settle } from './spend.ts';

/** The facts of one supervision that the journal keeps (snake_case, like every journal field). */
export interface OutcomeFacts {
  readonly status: string;
  readonly code: string | null;
  readonly child_exit: number | null;
  readonly provider_started: boolean;
  readonly marks: number;
  readonly duration_ms: number;
  readonly cleanup_confirmed: boolean;
}

/**
 * Records that `plan run` handed an open attempt to a supervisor: from here its provider
 * may have started, so a later `plan run` never starts it again (see planRun).
 */
export async function markDispatched(out: string, penv: PlanEnv, attemptId: string): Promise<void> {
  const { store, record } = locateRun(out, penv);
  const now = new Date().toISOString();
  await transact(store, record.run, (current) => {
    const run = need(current, record.run);
    const attempt = attemptOf(run, attemptId);
    if (attempt === undefined || attempt.state !== 'open') {
      throw new LanewardError('ATTEMPT_MISMATCH', `attempt ${attemptId} is ${attempt?.state ?? 'absent'}; only an open attempt is dispatched`);
    }
    // Two drivers on one run: the second to reach the slot starts nothing.
    if (attempt.dispatched_at !== undefined) throw inFlight(attempt);
    attempt.dispatched_at = now;
    attempt.dispatched_by = { pid: process.pid, ticks: processStart(process.pid)?.ticks ?? '' };
    // No child yet: set at its spawn (attempt_child). A driver that dies in between spawned none.
    attempt.child = null;
    const events: JournalEvent[] = [{ type: 'attempt_dispatched', at: now, attempt: attempt.id, phase: attempt.phase, voice: attempt.voice }];
    return { change: { record: run, events }, result: undefined };
  });
}

/** The refusal for an attempt another driver dispatched. */
export function inFlight(attempt: AttemptRecord): LanewardError {
  const by = attempt.dispatched_by === undefined ? 'another plan run' : `process ${attempt.dispatched_by.pid}`;
  return new LanewardError('ATTEMPT_IN_FLIGHT', `attempt ${attempt.id} was dispatched at ${attempt.dispatched_at} by ${by}, which still drives this run; not started twice`);
}

/** Whether the process that dispatched an attempt still runs (a crashed driver's attempts are resumed instead). */
export function dispatcherAlive(attempt: AttemptRecord): boolean {
  const by = attempt.dispatched_by;
  if (by === undefined) return false;
  return processAlive(by.pid, by.ticks === '' ? {} : { ticks: by.ticks });
}

/**
 * Journals one supervision's outcome for an attempt, whatever it was. A supervision
 * cancelled before its provider started takes the dispatch mark back: nothing went out,
 * so a later `plan run` may start it.
 */
export async function recordOutcome(out: string, penv: PlanEnv, attemptId: string, facts: OutcomeFacts): Promise<void> {
  const { store, record } = locateRun(out, penv);
  const now = new Date().toISOString();
  await transact(store, record.run, (current) => {
    const run = need(current, record.run);
    const attempt = attemptOf(run, attemptId);
    if (attempt === undefined) throw new LanewardError('ATTEMPT_MISMATCH', `no attempt ${attemptId} in run ${run.run}`);
    const events: JournalEvent[] = [{ type: 'attempt_outcome', at: now, attempt: attempt.id, phase: attempt.phase, voice: attempt.voice, ...facts }];
    if (!facts.provider_started && facts.code === 'CANCELLED' && attempt.state === 'open') {
      delete attempt.dispatched_at;
      delete attempt.dispatched_by;
      delete attempt.child;
    }
    return { change: { record: run, events }, result: undefined };
  });
}

/**
 * Closes one voice of an open attempt as a typed failure: `failed` when the call may have
 * gone out (its reservation settles as unknown spend), `unavailable` when nothing was
 * sent (the reservation goes back). Either voice: a failed outside voice leaves the
 * phase native-only once native binds; a failed native voice leaves the phase open until
 * the parent redispatches it (`plan next --redispatch`). Never retried here.
 */
export async function failVoice(
  out: string,
  penv: PlanEnv,
  attemptId: string,
  failure: { readonly status: 'failed' | 'unavailable'; readonly code: string; readonly detail: string },
): Promise<PlanReport> {
  const { store, record: located, runDir } = locateRun(out, penv);
  const report = emptyReport(runDir, located.run);
  const now = new Date().toISOString();
  const record = await transact(store, located.run, (current) => {
    const run = need(current, located.run);
    run.commands += 1;
    const events: JournalEvent[] = [];
    const step: Step = { now, events, findingsOf: (id) => store.blobs.get([run.run, id])?.findings ?? [] };
    const { attempt, phase } = openAttempt(run, attemptId, 'fail');
    if (failure.status === 'unavailable') release(run.spend, attempt);
    else settle(run.spend, attempt, null);
    attempt.state = failure.status;
    attempt.code = failure.code;
    attempt.why = `${failure.code}: ${failure.detail}`;
    phase[attempt.voice] = { status: failure.status, attempt: attempt.id };
    events.push({ type: `voice_${failure.status}`, at: now, attempt: attempt.id, phase: attempt.phase, voice: attempt.voice, code: failure.code, why: attempt.why });
    report.after.push(`VOICE: ${attempt.id} phase=${attempt.phase} voice=${attempt.voice} status=${failure.status} code=${failure.code}`);
    const consensus = closeIfDone(run, phase, step);
    if (consensus !== null) {
      report.closed.push({ phase: phase.id, confirmed: consensus.confirmed, unverified: consensus.unverified, disagree: consensus.disagree, new: consensus.new, native_only: consensus.native_only, coverage: consensus.coverage });
    }
    run.updated_at = now;
    return { change: { record: run, events }, result: run };
  });
  syncRunFiles(store, record, runDir);
  checkpointAfter(store, record, runDir, penv.env, report.after);
  describeRun(record, runDir, report, { open: false });
  report.status = terminalStatus(record.state);
  return report;
}

/**
 * Gives up an open attempt that this very `plan run` cancelled after its provider started
 * (an interruption, or a sibling that broke): not a provider failure, so the voice is not
 * failed. The attempt is abandoned (the call may have gone out: its reservation settles as
 * unknown spend) and its voice waits again with no attempt, which the next `plan next`
 * fills with a fresh one. The phase cannot close meanwhile.
 */
export async function cancelVoice(out: string, penv: PlanEnv, attemptId: string, why: string): Promise<PlanReport> {
  const { store, record: located, runDir } = locateRun(out, penv);
  const report = emptyReport(runDir, located.run);
  const now = new Date().toISOString();
  const record = await transact(store, located.run, (current) => {
    const run = need(current, located.run);
    run.commands += 1;
    const { attempt, phase } = openAttempt(run, attemptId, 'be cancelled');
    settle(run.spend, attempt, null);
    attempt.state = 'abandoned';
    attempt.code = 'CANCELLED';
    attempt.why = `CANCELLED: ${why}`;
    phase[attempt.voice] = { status: 'pending', attempt: null };
    const events: JournalEvent[] = [{ type: 'attempt_abandoned', at: now, attempt: attempt.id, phase: attempt.phase, voice: attempt.voice, code: 'CANCELLED', why: attempt.why }];
    report.after.push(`VOICE: ${attempt.id} phase=${attempt.phase} voice=${attempt.voice} status=cancelled code=CANCELLED`);
    run.updated_at = now;
    return { change: { record: run, events }, result: run };
  });
  syncRunFiles(store, record, runDir);
  checkpointAfter(store, record, runDir, penv.env, report.after);
  describeRun(record, runDir, report, { open: false });
  report.status = terminalStatus(record.state);
  return report;
}

/** The attempt a voice's end closes, with its phase: open, and the one its phase waits for. */
function openAttempt(run: RunRecord, attemptId: string, verb: string): { attempt: AttemptRecord; phase: ReturnType<typeof phaseOf> } {
  const attempt = attemptOf(run, attemptId);
  if (attempt === undefined) throw new LanewardError('ATTEMPT_MISMATCH', `no attempt ${attemptId} in run ${run.run}`);
  if (attempt.state !== 'open') throw new LanewardError('ATTEMPT_MISMATCH', `attempt ${attemptId} is ${attempt.state}; it can no longer ${verb}`);
  const phase = phaseOf(run, attempt.phase);
  if (phase.state !== 'open' || phase[attempt.voice].attempt !== attemptId) {
    throw new LanewardError('PHASE_NOT_AWAITING', `phase ${attempt.phase} is ${phase.state}; it is not waiting for ${attempt.voice} attempt ${attemptId}`);
  }
  return { attempt, phase };
}

function need(current: RunRecord | undefined, run: string): RunRecord {
  if (current === undefined) throw new LanewardError('RUN_NOT_INITIALIZED', `run ${run} vanished from its state root`);
  return current;
}
