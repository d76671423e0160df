import type { AttemptRecord } from '../../formats/review/run-record.ts';
import type { RunnerConfig } from '../../formats/providers/runner.ts';
import { SUPERVISION_DEFAULTS } from '../../workers/supervise/spec.ts';
import { onAbort } from '../../workers/supervise/on-abort.ts';
import type { SuperviseFn } from '../dispatch/dispatcher.ts';
import { loadVerifiedAction } from '../actions/load-descriptor.ts';
import type { LeaseRequest } from '../lease/lease-options.ts';
import { runDirOf } from './locate.ts';
import type { PlanEnv } from './settings.ts';
import { DEFAULT_ATTEMPT_TIMEOUT_MS, type AttemptEnd, type PlanRunEvent, type PlanRunOptions } from './run-types.ts';

/**
 * What every step of one plan run shares: its options, the verified action its attempts
 * are launched under, the one signal that stops them all, and the ends it saw.
 */
export interface RunSession {
  readonly options: PlanRunOptions;
  readonly planEnv: PlanEnv;
  readonly supervise: SuperviseFn;
  readonly runDir: string;
  readonly request: LeaseRequest;
  readonly verified: { readonly spec: ReturnType<typeof loadVerifiedAction>['spec']; readonly sha256: string };
  /** Aborted by the deadline, a cancel, or a sibling attempt that broke. */
  readonly stop: AbortSignal;
  readonly emit: (event: PlanRunEvent) => void;
  /** Every attempt this run ended, in the order they ended. */
  readonly ends: AttemptEnd[];
  /** Stops every attempt of the run (a sibling broke): no interruption is recorded. */
  readonly abort: () => void;
  /** Why the run was interrupted; null while it was not. */
  interrupted(): 'deadline' | 'cancel' | null;
  /** Releases the deadline's timer and the cancel's listener. */
  close(): void;
}

/** The lease every attempt of a run asks for, with the defaults filled in. */
export function leaseRequestOf(options: PlanRunOptions): LeaseRequest {
  return {
    file: options.actionsFile,
    trust: options.trust,
    action: options.action,
    timeoutMs: options.timeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS,
    graceMs: options.graceMs ?? SUPERVISION_DEFAULTS.graceMs,
    teardownMs: options.teardownMs ?? SUPERVISION_DEFAULTS.teardownMs,
    stdoutLimit: SUPERVISION_DEFAULTS.stdoutLimit,
    stderrLimit: SUPERVISION_DEFAULTS.stderrLimit,
  };
}

/** Opens a run's session: verifies its action, arms its deadline and links its cancel. */
export function openSession(options: PlanRunOptions, planEnv: PlanEnv, supervise: SuperviseFn): RunSession {
  const runDir = runDirOf(options.out, planEnv);
  const request = leaseRequestOf(options);
  // The descriptor is verified once, before anything starts (a refusal starts no run and no
  // child); every attempt of this run is launched under that verified action.
  const verified = loadVerifiedAction(request.file, request.trust, request.action);
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
  return {
    options,
    planEnv,
    supervise,
    runDir,
    request,
    verified,
    stop: stop.signal,
    emit: options.onEvent ?? (() => undefined),
    ends: [],
    abort: () => {
      if (!stop.signal.aborted) stop.abort('SIGTERM');
    },
    interrupted: () => interrupted,
    close: () => {
      if (timer !== undefined) clearTimeout(timer);
      unlinkCancel();
    },
  };
}

/** The runner an attempt's voice is launched with. */
export function runnerOf(options: Pick<PlanRunOptions, 'native' | 'outside'>, attempt: Pick<AttemptRecord, 'voice'>): RunnerConfig {
  return attempt.voice === 'native' ? options.native : options.outside;
}
