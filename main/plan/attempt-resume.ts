import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { AttemptRecord } from '../../formats/review/run-record.ts';
import { findLiveByEnv } from '../../workers/supervise/find-by-env.ts';
import { nowMs } from '../../workers/supervise/monotonic-timer.ts';
import type { SupervisionSpec } from '../../workers/supervise/spec.ts';
import { childRecord } from '../dispatch/orphans.ts';
import { specFrom } from '../lease/lease-options.ts';
import { costOf } from '../providers/cost.ts';
import { launchOf, launchSpec, settleResult } from '../providers/launch.ts';
import { streamEnd, streamFacts } from '../providers/stream-facts.ts';
import { recordChild, settleOrphan, undispatch } from './attempt-child.ts';
import { attemptOutput, withAttemptOutput } from './attempt-output.ts';
import { ended, failAttempt, submitAttempt } from './attempt-settle.ts';
import { attemptOf } from './core/records.ts';
import { locateRun } from './locate.ts';
import { planNext } from './next.ts';
import { orphanVerdict } from './orphan-verdict.ts';
import { runnerOf, type RunSession } from './run-session.ts';
import { dispatcherAlive, inFlight } from './voice-outcome.ts';

/**
 * An attempt an earlier driver dispatched and never saw end: never started twice. Its
 * child, still running, is adopted or torn down ({@link settleOrphan}); then what it left
 * is settled as {@link orphanVerdict} says. 'dispatch' when it never spawned: the caller
 * starts it as it is.
 */
export async function resumeAttempt(session: RunSession, attempt: AttemptRecord, result: string): Promise<'dispatch' | undefined> {
  const { options, planEnv, runDir } = session;
  // Another plan run that still runs drives it: refused, never started twice nor failed under it.
  if (dispatcherAlive(attempt)) throw inFlight(attempt);
  // A crew may be settling it already, before its lanes started: its settlement is journaled.
  await options.orphans?.get(attempt.id);
  // The spec it was launched under: an adopter follows its output files as its supervisor did.
  const launch = launchOf(runnerOf(options, attempt), { role: 'reviewer', prompt: join(runDir, attempt.prompt), result });
  const base = withAttemptOutput(launchSpec({ ...specFrom(session.verified.spec, session.verified.sha256, session.request, [], nowMs()), cwd: planEnv.cwd }, launch, {}), runDir, attempt.id);
  const current = await withUnjournaledChild(session, attemptOf(locateRun(options.out, planEnv).record, attempt.id) ?? attempt, base);
  const end = await settleOrphan(options.out, planEnv, current, { base, supervise: session.supervise, cancel: session.stop });
  const at = { attempt: attempt.id, phase: attempt.phase, voice: attempt.voice };
  // A preset's result is in its stream: a stream that reached its end tells the outcome
  // (its reply bound, its cost charged), whoever saw it end; only one that says nothing is unknown.
  const facts = launch.provider === undefined || current.child == null ? null : streamFacts(launch.provider, attemptOutput(runDir, attempt.id).stdout);
  const told = streamEnd(facts);
  if (told === 'done' && !existsSync(result)) settleResult(result, facts);
  const used = { model: launch.model, usageUsd: costOf(facts, launch.model, options.prices) };
  const found = existsSync(result);
  const verdict = orphanVerdict({ end, childJournaled: current.child !== null, found, told });
  if (verdict.verdict === 'dispatch') {
    await undispatch(options.out, planEnv, attempt.id);
    session.emit({ type: 'orphan', ...at, pid: null, how: 'never_started', code: null, cleanup: true });
    return 'dispatch';
  }
  if (end !== undefined) session.emit({ type: 'orphan', ...at, pid: current.child?.pid ?? null, how: end.how, code: end.code, cleanup: end.cleanup_confirmed });
  session.emit({ type: 'resumed', ...at, result: found });
  const pid = current.child?.pid;
  switch (verdict.verdict) {
    case 'bind':
      return void (await submitAttempt(session, attempt, result, null, used));
    case 'stream_failed':
      return void (await failAttempt(session, attempt, 'failed', verdict.code, `ran under a driver that died (pid ${pid}); its stream ended in an error: ${facts?.apiError ?? facts?.rateLimit?.message ?? '?'}`, null));
    case 'mint': {
      const report = await planNext({ out: options.out, redispatch: attempt.id }, planEnv);
      session.emit({ type: 'report', command: 'next', report });
      ended(session, attempt, 'open', 'CANCELLED', null);
      return undefined;
    }
    case 'teardown_unproven':
      return void (await failAttempt(session, attempt, 'failed', 'TEARDOWN_UNPROVEN', `the orphan of a driver that died (pid ${pid}) could not be proven gone`, null));
    case 'adopted_failed':
      return void (await failAttempt(session, attempt, 'failed', verdict.code, `adopted from a driver that died (pid ${pid}); ended ${verdict.code}`, null));
    case 'unknown':
      return void (await failAttempt(session, attempt, 'failed', 'EXECUTION_UNKNOWN', `dispatched at ${attempt.dispatched_at} by a plan run that ended before its outcome; its child ran and left no result; not started again`, null));
  }
}

/**
 * A driver killed between a spawn and its journal leaves the attempt dispatched with no
 * child: the child is looked for by the attempt its environment names, and if it runs it
 * is journaled now, to be settled as any orphan. None found: it never spawned (or ended
 * within that instant, leaving no result), and the attempt may be started.
 */
async function withUnjournaledChild(session: RunSession, attempt: AttemptRecord, base: SupervisionSpec): Promise<AttemptRecord> {
  if (attempt.child !== null || attempt.orphan !== undefined) return attempt;
  const live = findLiveByEnv('LANEWARD_ATTEMPT', attempt.id);
  if (live === undefined) return attempt;
  const { options, planEnv } = session;
  const budgetLeftMs = Math.max(0, Date.parse(attempt.dispatched_at ?? new Date().toISOString()) + base.timeoutMs - Date.now());
  await recordChild(options.out, planEnv, attempt.id, { ...childRecord(base, { pid: live.pid, ticks: live.ticks, budgetLeftMs }), pgid: live.pgid });
  return attemptOf(locateRun(options.out, planEnv).record, attempt.id) ?? attempt;
}
