import { nowMs } from '../../workers/supervise/monotonic-timer.ts';
import { buildOutcome, type Outcome } from '../../workers/supervise/outcome.ts';
import type { SupervisionSpec } from '../../workers/supervise/spec.ts';

/** The signal an abort names (its reason), SIGTERM when it names none. */
export function abortSignalName(signal: AbortSignal): NodeJS.Signals {
  const reason: unknown = signal.reason;
  return (typeof reason === 'string' && reason.startsWith('SIG') ? reason : 'SIGTERM') as NodeJS.Signals;
}

/** The outcome of a supervision cancelled before its provider was started (still queued). */
export function cancelledBeforeStart(spec: SupervisionSpec, cancelSignal: string): Outcome {
  return buildOutcome({
    code: 'CANCELLED',
    action: spec.action,
    timeoutMode: spec.mode,
    descriptorSha256: spec.descriptorSha256,
    childExitCode: null,
    signal: null,
    cancelSignal,
    spawnError: null,
    providerStarted: false,
    attempts: 0,
    marks: 0,
    durationMs: Math.max(0, nowMs() - spec.startedAt),
    cleanupConfirmed: true,
    expiryLateMs: null,
    firstSignalMs: null,
    goneMs: null,
    deniedTool: null,
  });
}
