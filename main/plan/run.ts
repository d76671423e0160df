import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { isLanewardError } from '../../formats/codes/error.ts';
import type { AttemptRecord, PhaseId, VoiceId } from '../../formats/review/run-record.ts';
import { nowMs } from '../../workers/supervise/monotonic-timer.ts';
import type { Outcome } from '../../workers/supervise/outcome.ts';
import { SUPERVISION_DEFAULTS, type SupervisionSpec } from '../../workers/supervise/spec.ts';
import type { SuperviseFn } from '../dispatch/dispatcher.ts';
import { loadVerifiedAction } from '../actions/load-descriptor.ts';
import { specFrom, type LeaseRequest } from '../lease/lease-options.ts';
import { launchOf, launchSpec, settleResult } from '../providers/launch.ts';
import { costOf, type Prices } from '../providers/cost.ts';
import type { RunnerConfig } from '../../formats/providers/runner.ts';
import { finishedWork } from '../../workers/supervise/outcome.ts';
import { locateRun, runDirOf } from './locate.ts';
import type { PlanEnv } from './settings.ts';
import { planNext } from './next.ts';
import type { PlanReport } from './report.ts';
import { readBinding } from './run-binding.ts';
import { planStatus } from './status.ts';
import { planSubmit } from './submit.ts';
import { recordChild, settleOrphan, undispatch } from './attempt-child.ts';
import { findLiveByEnv } from '../../workers/supervise/find-by-env.ts';
import { attemptOf } from './core/records.ts';
import { attemptOutput, withAttemptOutput } from './attempt-output.ts';
import { streamEnd, streamFacts } from '../providers/stream-facts.ts';
import { childRecord } from '../dispatch/orphans.ts';
import type { OrphanEnd } from '../../formats/supervision/child-record.ts';
import { claimRun, type ReleaseRun } from './run-driver.ts';
import { cancelVoice, dispatcherAlive, failVoice, inFlight, markDispatched, outcomeCommand, recordOutcome, type OutcomeFacts } from './voice-outcome.ts';
import { onAbort } from '../../workers/supervise/on-abort.ts';

/** The provider's budget when the caller gives none: the lease, or the total deadline. */
export const DEFAULT_ATTEMPT_TIMEOUT_MS = 10 * 60_000;

export interface PlanRunOptions {
  readonly out: string;
  /** Needed by the first run on `out` only (it starts the review run). */
  readonly plan?: string;
  /**
   * Argv templates ({prompt} and {result} substituted inside each element, never through a
   * shell) or provider presets (the prompt on stdin, the result from the stream).
   */
  readonly native: RunnerConfig;
  readonly outside: RunnerConfig;
  readonly nativeModel: string;
  readonly outsideModel: string;
  /** The signed action that sets timeout mode and budgets. */
  readonly action: string;
  readonly actionsFile: string;
  readonly trust: string;
  /** Each provider's budget (the lease, or its total deadline); default {@link DEFAULT_ATTEMPT_TIMEOUT_MS}. */
  readonly timeoutMs?: number;
  readonly graceMs?: number;
  readonly teardownMs?: number;
  /** The whole run's budget: at expiry the children it started are cancelled and the run ends `interrupted`. */
  readonly deadlineMs?: number;
  /** The run's spend cap in USD, set by the first next (like `plan next --spend-cap`). */
  readonly spendCap?: number;
  readonly cancel?: AbortSignal;
  readonly onEvent?: (event: PlanRunEvent) => void;
  /**
   * Settlements of this run's orphans already under way (a crew starts them before any
   * lane), by attempt id: an attempt is resumed only once its settlement is journaled.
   */
  readonly orphans?: ReadonlyMap<string, Promise<unknown>>;
  /** USD per million tokens by model, for presets whose stream gives tokens but no cost. */
  readonly prices?: Prices;
}

/** One attempt's end as `plan run` saw it. */
export interface AttemptEnd {
  readonly attempt: string;
  readonly phase: PhaseId;
  readonly voice: VoiceId;
  /**
   * bound: its result bound; failed / unavailable: a typed failure; open: cancelled before
   * it started; cancelled: this run cancelled it after it started (the next run mints its
   * voice anew).
   */
  readonly state: 'bound' | 'failed' | 'unavailable' | 'open' | 'cancelled';
  /** The result code of a failure (a supervision code, a submit refusal, EXECUTION_UNKNOWN); null when bound. */
  readonly code: string | null;
  /** The supervision's facts; null for an attempt resumed from an earlier run. */
  readonly outcome: OutcomeFacts | null;
}

export type PlanRunEvent =
  | { readonly type: 'report'; readonly command: 'next' | 'submit' | 'fail'; readonly report: PlanReport }
  | { readonly type: 'dispatched'; readonly attempt: string; readonly phase: PhaseId; readonly voice: VoiceId }
  | { readonly type: 'outcome'; readonly attempt: string; readonly phase: PhaseId; readonly voice: VoiceId; readonly outcome: OutcomeFacts }
  | { readonly type: 'resumed'; readonly attempt: string; readonly phase: PhaseId; readonly voice: VoiceId; readonly result: boolean }
  | {
      readonly type: 'orphan';
      readonly attempt: string;
      readonly phase: PhaseId;
      readonly voice: VoiceId;
      /** The child a driver that died left (null: it never spawned one). */
      readonly pid: number | null;
      readonly how: OrphanEnd['how'] | 'never_started';
      readonly code: string | null;
      readonly cleanup: boolean;
    }
  | { readonly type: 'interrupted'; readonly reason: 'deadline' | 'cancel' }
  | { readonly type: 'stopped'; readonly why: string };

/** The final report (the run as the store holds it), with what this run did. */
export interface PlanRunReport extends PlanReport {
  /** Every attempt this run ended, in the order they ended. */
  readonly ends: readonly AttemptEnd[];
  /** Why the run stopped early: the deadline, or a cancel (a signal); null when it did not. */
  readonly interrupted: 'deadline' | 'cancel' | null;
  /** Set when the run cannot move on by itself (a native voice failed). */
  readonly stopped: string | null;
}

/**
 * `plan run`: drives the review run to its gate. Each round: `plan next`; every open
 * attempt of the open phase is supervised through `run` (both voices at once, each under
 * the signed action's timeout mode); an ok outcome's result file is submitted, any other
 * end (a failure, a timeout, a refused result) closes that voice as a typed failure in the
 * journal, never retried. It stops at gate_pending, complete or reviewed; interrupted on
 * the deadline or a cancel (the children it started are cancelled); or stopped when a
 * native voice failed (the phase needs `plan next --redispatch`).
 *
 * Resuming: an attempt is marked dispatched (journal `attempt_dispatched`) when its slot
 * is granted, before its provider can start, and its child (pid, start time, group) is
 * journaled right after the spawn (`attempt_child`). A later plan run on the same
 * directory never starts a dispatched attempt again: a child still running is adopted or
 * torn down with proof (a teardown is a cancel of ours: the voice is minted anew); then
 * it binds the result file if the provider wrote one, else the voice fails with
 * EXECUTION_UNKNOWN. An attempt whose child never spawned is simply started. An attempt
 * this run cancelled itself after its provider started (the deadline, a signal, stdout
 * closed) is abandoned, not failed: its voice gets a fresh attempt at the next run's
 * first next.
 *
 * One driver per run: the run is claimed in the store (RUN_BUSY while another live plan
 * run holds it) before anything is dispatched, and released at the end.
 */
export async function planRun(options: PlanRunOptions, planEnv: PlanEnv, supervise: SuperviseFn): Promise<PlanRunReport> {
  const runDir = runDirOf(options.out, planEnv);
  const request: LeaseRequest = {
    file: options.actionsFile,
    trust: options.trust,
    action: options.action,
    timeoutMs: options.timeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS,
    graceMs: options.graceMs ?? SUPERVISION_DEFAULTS.graceMs,
    teardownMs: options.teardownMs ?? SUPERVISION_DEFAULTS.teardownMs,
    stdoutLimit: SUPERVISION_DEFAULTS.stdoutLimit,
    stderrLimit: SUPERVISION_DEFAULTS.stderrLimit,
  };
  // The descriptor is verified once, before anything starts (a refusal starts no run and no
  // child); every attempt of this run is launched under that verified action.
  const verified = loadVerifiedAction(request.file, request.trust, request.action);
  const emit = options.onEvent ?? (() => undefined);
  const stop = new AbortController();
  let interrupted: 'deadline' | 'cancel' | null = null;
  const interrupt = (reason: 'deadline' | 'cancel', signal: unknown) => {
    if (stop.signal.aborted) return;
    interrupted = reason;
    stop.abort(typeof signal === 'string' ? signal : 'SIGTERM');
  };
  // Through the signal's one fan-out listener: every lane of a crew passes the crew's stop.
  const unlinkCancel = options.cancel === undefined ? () => undefined : onAbort(options.cancel, () => interrupt('cancel', options.cancel?.reason));
  const timer = options.deadlineMs === undefined ? undefined : setTimeout(() => interrupt('deadline', 'SIGTERM'), options.deadlineMs);
  const ends: AttemptEnd[] = [];
  let stopped: string | null = null;

  // A supervision's outcome is journaled with the voice's end, in one transaction; its
  // progress line is printed once that committed.
  const journaled = (attempt: AttemptRecord, outcome: OutcomeFacts | null) => (outcome === null ? [] : [outcomeCommand(attempt.id, outcome)]);
  const announce = (attempt: AttemptRecord, outcome: OutcomeFacts | null) => {
    if (outcome !== null) emit({ type: 'outcome', attempt: attempt.id, phase: attempt.phase, voice: attempt.voice, outcome });
  };

  const fail = async (attempt: AttemptRecord, status: 'failed' | 'unavailable', code: string, detail: string, outcome: OutcomeFacts | null) => {
    // A call that failed after its stream gave its cost is charged that cost, not its reservation.
    const usd = outcome?.cost_usd ?? null;
    const report = await failVoice(options.out, planEnv, attempt.id, { status, code, detail, ...(usd === null ? {} : { usageUsd: usd }) }, journaled(attempt, outcome));
    announce(attempt, outcome);
    emit({ type: 'report', command: 'fail', report });
    ends.push({ attempt: attempt.id, phase: attempt.phase, voice: attempt.voice, state: status, code, outcome });
  };

  const submit = async (attempt: AttemptRecord, result: string, outcome: OutcomeFacts | null, used: { model: string | null; usageUsd: number | null } = { model: null, usageUsd: null }) => {
    let report: PlanReport;
    try {
      const model = used.model ?? (attempt.voice === 'native' ? options.nativeModel : options.outsideModel);
      report = await planSubmit(
        { out: options.out, phase: attempt.phase, voice: attempt.voice, attempt: attempt.id, result, model, runner: 'plan-run', ...(used.usageUsd === null ? {} : { usageUsd: used.usageUsd }) },
        planEnv,
        journaled(attempt, outcome),
      );
    } catch (error) {
      // A result the contract refuses is this voice's typed failure (the outcome is journaled
      // with it); anything else is the run's.
      if (!isLanewardError(error) || error.code === 'STATE_UNAVAILABLE' || error.code === 'INTERNAL') throw error;
      return fail(attempt, 'failed', error.code, error.message, outcome);
    }
    announce(attempt, outcome);
    emit({ type: 'report', command: 'submit', report });
    ends.push({ attempt: attempt.id, phase: attempt.phase, voice: attempt.voice, state: 'bound', code: null, outcome });
  };

  /**
   * An attempt an earlier driver dispatched and never saw end: never started twice. Its
   * child, still running, is adopted or torn down ({@link settleOrphan}); then a result it
   * left is bound; a child torn down by us with none is dispatched anew (a new attempt);
   * one that ran and vanished with none is EXECUTION_UNKNOWN. One that never spawned is
   * dispatched as it is ('dispatch').
   */
  const resume = async (attempt: AttemptRecord, result: string): Promise<'dispatch' | undefined> => {
    // Another plan run that still runs drives it: refused, never started twice nor failed under it.
    if (dispatcherAlive(attempt)) throw inFlight(attempt);
    // A crew may be settling it already, before its lanes started: its settlement is journaled.
    await options.orphans?.get(attempt.id);
    // The spec it was launched under: an adopter follows its output files as its supervisor did.
    const launch = launchOf(runnerOf(attempt), { role: 'reviewer', prompt: join(runDir, attempt.prompt), result });
    const base = withAttemptOutput(launchSpec({ ...specFrom(verified.spec, verified.sha256, request, [], nowMs()), cwd: planEnv.cwd }, launch, {}), runDir, attempt.id);
    const current = await withUnjournaledChild(attemptOf(locateRun(options.out, planEnv).record, attempt.id) ?? attempt, base);
    const end = await settleOrphan(options.out, planEnv, current, { base, supervise, cancel: stop.signal });
    const at = { attempt: attempt.id, phase: attempt.phase, voice: attempt.voice };
    // A preset's result is in its stream: a stream that reached its end tells the outcome
    // (its reply bound, its cost charged), whoever saw it end; only one that says nothing is unknown.
    const facts = launch.provider === undefined || current.child == null ? null : streamFacts(launch.provider, attemptOutput(runDir, attempt.id).stdout);
    const told = streamEnd(facts);
    if (told === 'done' && !existsSync(result)) settleResult(result, facts);
    const used = { model: launch.model, usageUsd: costOf(facts, launch.model, options.prices) };
    const found = existsSync(result);
    if (end === undefined && current.child === null && !found) {
      await undispatch(options.out, planEnv, attempt.id);
      emit({ type: 'orphan', ...at, pid: null, how: 'never_started', code: null, cleanup: true });
      return 'dispatch';
    }
    if (end !== undefined) emit({ type: 'orphan', ...at, pid: current.child?.pid ?? null, how: end.how, code: end.code, cleanup: end.cleanup_confirmed });
    emit({ type: 'resumed', ...at, result: found });
    if (found) return void (await submit(attempt, result, null, used));
    if (told === 'CHILD_FAILED' || told === 'PROVIDER_RATE_LIMITED') {
      return void (await fail(attempt, 'failed', told, `ran under a driver that died (pid ${current.child?.pid}); its stream ended in an error: ${facts?.apiError ?? facts?.rateLimit?.message ?? '?'}`, null));
    }
    const cancelledByUs = end !== undefined && (end.how === 'torn_down' || (end.how === 'adopted' && end.code === 'CANCELLED'));
    if (cancelledByUs && end.cleanup_confirmed) {
      // Cancelled by us (torn down, or an adoption the crew cancelled), proven gone, nothing
      // bound: its voice is minted anew, as a crew does for the children it cancels.
      const report = await planNext({ out: options.out, redispatch: attempt.id }, planEnv);
      emit({ type: 'report', command: 'next', report });
      ends.push({ ...at, state: 'open', code: 'CANCELLED', outcome: null });
      return undefined;
    }
    if (end?.how === 'torn_down') return void (await fail(attempt, 'failed', 'TEARDOWN_UNPROVEN', `the orphan of a driver that died (pid ${current.child?.pid}) could not be proven gone`, null));
    if (end?.how === 'adopted' && end.code !== null) return void (await fail(attempt, 'failed', end.code, `adopted from a driver that died (pid ${current.child?.pid}); ended ${end.code}`, null));
    return void (await fail(attempt, 'failed', 'EXECUTION_UNKNOWN', `dispatched at ${attempt.dispatched_at} by a plan run that ended before its outcome; its child ran and left no result; not started again`, null));
  };

  /**
   * A driver killed between a spawn and its journal leaves the attempt dispatched with no
   * child: the child is looked for by the attempt its environment names, and if it runs it
   * is journaled now, to be settled as any orphan. None found: it never spawned (or ended
   * within that instant, leaving no result), and the attempt may be started.
   */
  const withUnjournaledChild = async (attempt: AttemptRecord, base: SupervisionSpec): Promise<AttemptRecord> => {
    if (attempt.child !== null || attempt.orphan !== undefined) return attempt;
    const live = findLiveByEnv('LANEWARD_ATTEMPT', attempt.id);
    if (live === undefined) return attempt;
    const budgetLeftMs = Math.max(0, Date.parse(attempt.dispatched_at ?? new Date().toISOString()) + base.timeoutMs - Date.now());
    await recordChild(options.out, planEnv, attempt.id, { ...childRecord(base, { pid: live.pid, ticks: live.ticks, budgetLeftMs }), pgid: live.pgid });
    return attemptOf(locateRun(options.out, planEnv).record, attempt.id) ?? attempt;
  };

  const runnerOf = (attempt: AttemptRecord): RunnerConfig => (attempt.voice === 'native' ? options.native : options.outside);

  const handle = async (attempt: AttemptRecord): Promise<void> => {
    const prompt = join(runDir, attempt.prompt);
    const result = join(runDir, attempt.result);
    if (attempt.dispatched_at !== undefined && (await resume(attempt, result)) !== 'dispatch') return;
    const launch = launchOf(runnerOf(attempt), { role: 'reviewer', prompt, result });
    const launched = launchSpec({ ...specFrom(verified.spec, verified.sha256, request, launch.argv, nowMs()), cwd: planEnv.cwd }, launch, {
      LANEWARD_ATTEMPT: attempt.id,
      LANEWARD_PROMPT_FILE: prompt,
      LANEWARD_RESULT_FILE: result,
    });
    // Its output goes to files of the attempt: what it streams outlives this run if it dies.
    const spec = withAttemptOutput(launched, runDir, attempt.id);
    const outcome = await supervise(spec, {
      cancel: stop.signal,
      // The provider's budget starts with its slot: waiting behind other children is not its time.
      budgetFromSlot: true,
      onSlot: async () => {
        await markDispatched(options.out, planEnv, attempt.id);
        emit({ type: 'dispatched', attempt: attempt.id, phase: attempt.phase, voice: attempt.voice });
      },
      // Journaled while it runs: a plan run started after this one died finds it.
      onSpawn: (child) => recordChild(options.out, planEnv, attempt.id, childRecord(spec, child)),
    });
    // The call's cost: the provider's own figure, else its tokens at the operator's prices.
    const usd = costOf(outcome.provider, launch.model, options.prices);
    const facts = outcomeFacts(outcome, usd);
    if (finishedWork(outcome)) {
      if (launch.provider !== undefined) settleResult(result, outcome.provider);
      return submit(attempt, result, facts, { model: launch.model, usageUsd: usd });
    }
    if (outcome.code === 'CANCELLED' && !outcome.providerStarted) {
      // Nothing went out: the attempt stays open for the next plan run.
      await recordOutcome(options.out, planEnv, attempt.id, facts);
      announce(attempt, facts);
      ends.push({ attempt: attempt.id, phase: attempt.phase, voice: attempt.voice, state: 'open', code: 'CANCELLED', outcome: facts });
      return;
    }
    if (outcome.code === 'CANCELLED') {
      // Only this run cancels its children (an interruption, or a sibling that broke): that
      // is no failure of the provider. The attempt is given up and its voice waits for a
      // fresh one, which the next plan run's first next mints; its phase never closes
      // without it.
      const report = await cancelVoice(options.out, planEnv, attempt.id, `cancelled by this plan run (${outcome.cancelSignal ?? 'SIGTERM'}) after ${facts.duration_ms} ms`, journaled(attempt, facts), usd);
      announce(attempt, facts);
      emit({ type: 'report', command: 'fail', report });
      ends.push({ attempt: attempt.id, phase: attempt.phase, voice: attempt.voice, state: 'cancelled', code: 'CANCELLED', outcome: facts });
      return;
    }
    const limited = outcome.provider?.rateLimit;
    const why = limited == null ? '' : `, rate limited (${limited.status ?? '?'}${limited.retryAfterS === null ? '' : `, retry after ${limited.retryAfterS} s`})`;
    const detail = `action ${options.action} (${outcome.timeoutMode ?? 'refused'}) after ${facts.duration_ms} ms, child exit ${outcome.childExitCode ?? '-'}, marks ${outcome.marks}${why}`;
    return fail(attempt, outcome.providerStarted ? 'failed' : 'unavailable', outcome.code ?? 'INTERNAL', detail, facts);
  };

  // One driver per run, claimed before anything is dispatched or changed; a run that does
  // not exist yet is claimed right after the next that creates it, before its first dispatch.
  let release: ReleaseRun | undefined;
  try {
    release = await claimRun(options.out, planEnv);
    let seen = '';
    while (!stop.signal.aborted) {
      const first = readBinding(runDir) === undefined;
      const start = first ? { ...(options.plan === undefined ? {} : { plan: options.plan }), ...(options.spendCap === undefined ? {} : { spendCap: options.spendCap }) } : {};
      const next = await planNext({ out: options.out, ...start }, planEnv);
      release ??= await claimRun(options.out, planEnv);
      emit({ type: 'report', command: 'next', report: next });
      if (next.status !== 'awaiting_result') break;
      const { record } = locateRun(options.out, planEnv);
      const open = Object.values(record.attempts).filter((a) => a.state === 'open' && a.phase === record.current);
      const key = open.map((a) => a.id).join(',');
      if (open.length === 0 || key === seen) {
        const failed = Object.values(record.attempts).find((a) => a.phase === record.current && a.voice === 'native' && (a.state === 'failed' || a.state === 'unavailable'));
        stopped = failed !== undefined
          ? `phase ${failed.phase} native voice ${failed.state} (${failed.code ?? 'unknown'}); run plan next --redispatch ${failed.id}, then plan run again`
          : `phase ${record.current ?? '-'} has no attempt plan run can move`;
        emit({ type: 'stopped', why: stopped });
        break;
      }
      seen = key;
      // One voice refused or broken stops its sibling too, and waits for its teardown: no
      // child outlives the run that started it.
      const settled = await Promise.allSettled(
        open.map((attempt) =>
          handle(attempt).catch((error: unknown) => {
            if (!stop.signal.aborted) stop.abort('SIGTERM');
            throw error;
          }),
        ),
      );
      const broken = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (broken !== undefined) throw broken.reason;
    }
    if (interrupted !== null) emit({ type: 'interrupted', reason: interrupted });
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    unlinkCancel();
    await release?.();
  }
  const final = planStatus({ out: options.out }, planEnv);
  if (interrupted !== null) final.status = 'interrupted';
  return Object.assign(final, { ends, interrupted, stopped });
}

function outcomeFacts(outcome: Outcome, usd: number | null = null): OutcomeFacts {
  const provider = outcome.provider;
  return {
    ...(provider === null
      ? {}
      : {
          session: provider.sessionId,
          usage: provider.usage,
          cost_usd: usd,
          ...(provider.rateLimit === null ? {} : { rate_limit: { status: provider.rateLimit.status, retry_after_s: provider.rateLimit.retryAfterS } }),
        }),
    status: outcome.status,
    code: outcome.code,
    child_exit: outcome.childExitCode,
    provider_started: outcome.providerStarted,
    marks: outcome.marks,
    duration_ms: Math.round(outcome.durationMs),
    cleanup_confirmed: outcome.cleanupConfirmed,
  };
}
