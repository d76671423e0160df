import { randomBytes } from 'node:crypto';
import type { ResultCode } from '../../formats/codes/codes.ts';
import { isLanewardError } from '../../formats/codes/error.ts';
import type { ExitFacts } from '../../formats/codes/exit-status.ts';
import type { GuardEvent } from '../../formats/supervision/receipt.ts';
import { guardEvent } from './guard-event.ts';
import { nowMs } from '../../workers/supervise/monotonic-timer.ts';
import { SUPERVISION_DEFAULTS, type SupervisionSpec } from '../../workers/supervise/spec.ts';
import { supervise } from '../../workers/supervise/supervise.ts';
import { claimProbe } from './probe-claim.ts';
import { appendProbeRecord, probeLogPath } from './probe-log.ts';
import { checkReceiptPath, readReceipt } from './receipt-file.ts';

/**
 * The guard as a supervision: total-deadline mode for the time the receipt has left, no
 * cleanup reserve, zero grace (SIGKILL at the deadline, and at once when the command
 * ends, for anything it left behind) and inherited stdio.
 */
export function guardSpec(argv: readonly string[], remainingMs: number, startedAt: number): SupervisionSpec {
  return {
    argv,
    stdio: 'inherit',
    mode: 'total_deadline',
    progress: null,
    timeoutMs: remainingMs,
    cleanupReserveMs: 0,
    // Nothing to drain: the probe's output is the guard's own stdout and stderr.
    postProviderMs: SUPERVISION_DEFAULTS.teardownMs,
    graceMs: 0,
    teardownMs: SUPERVISION_DEFAULTS.teardownMs,
    stdoutLimit: SUPERVISION_DEFAULTS.stdoutLimit,
    stderrLimit: SUPERVISION_DEFAULTS.stderrLimit,
    startedAt,
    action: null,
    descriptorSha256: null,
  };
}

/** How a guarded run ended: its code, what the exit depends on, and how to close the record. */
export interface GuardedRun {
  readonly code: ResultCode | null;
  readonly facts: ExitFacts;
  /**
   * Appends the finish record (when a probe was launched or claimed) and returns the
   * last guard line, given the exit status the CLI chose from the code.
   */
  readonly finish: (exitCode: number) => GuardEvent;
}

/**
 * `deadline run`: re-validates the receipt, claims a probe slot, then runs the command as
 * a supervision in total-deadline mode with zero grace and inherited stdio, for the time
 * the receipt has left. Guard lines go to `emit` as they happen (the started line, and
 * any refusal); the last line is left to the caller, who must flush it within its bound.
 * A refused receipt throws (RECEIPT_INVALID) after emitting its error line.
 */
export async function runGuarded(file: string, argv: readonly string[], emit: (event: GuardEvent) => void, cancel: AbortSignal): Promise<GuardedRun> {
  let absolute: string;
  let read: ReturnType<typeof readReceipt>;
  try {
    absolute = checkReceiptPath(file);
    read = readReceipt(absolute);
  } catch (error) {
    if (isLanewardError(error)) emit(guardEvent('error', null, { code: error.code, message: error.message }));
    throw error;
  }
  const { receipt, identity } = read;
  const refused = (code: ResultCode, extra: Record<string, unknown> = {}): GuardedRun => ({
    code,
    facts: {},
    finish: () => guardEvent('expired', receipt, { code, launched: false, ...extra }),
  });
  const deadline = Date.parse(receipt.deadlineAt);
  if (deadline - Date.now() <= 0) return refused('DEADLINE_EXPIRED');

  const log = probeLogPath(absolute);
  const probe = `${process.pid}-${randomBytes(6).toString('hex')}`;
  let claim;
  try {
    claim = claimProbe(log, probe, receipt.version === 2 ? receipt.maxProbes : undefined, identity, new Date().toISOString());
  } catch (error) {
    // The budget cannot be proven: refused like an exhausted one, nothing started.
    if (isLanewardError(error) && error.code === 'PROBE_LOG_INVALID') return refused('PROBE_LOG_INVALID', { message: error.message });
    if (isLanewardError(error)) emit(guardEvent('error', receipt, { code: error.code, message: error.message }));
    throw error;
  }
  if (!claim.granted) return refused('PROBE_BUDGET_EXHAUSTED', { probe: claim.index });

  // The clock is read again after the claim: reading a long probe log takes time too.
  const remainingMs = deadline - Date.now();
  const startedAt = nowMs();
  const record = (fields: Record<string, unknown>) => appendProbeRecord(log, { event: 'finish', probe, at: new Date().toISOString(), ...fields });
  if (remainingMs <= 0) {
    return { ...refused('DEADLINE_EXPIRED', { probe: claim.index }), finish: (exitCode) => (record({ exitCode, timedOut: true, launched: false }), guardEvent('expired', receipt, { code: 'DEADLINE_EXPIRED', launched: false, probe: claim.index })) };
  }

  const spec = guardSpec(argv, remainingMs, startedAt);
  const outcome = await supervise(spec, cancel, {
    onSpawn: (pid) => emit(guardEvent('started', receipt, { pid, probe: claim.index, argv0: argv[0] })),
  });
  const durationMs = Math.round(outcome.durationMs);
  const facts: ExitFacts = { childExitCode: outcome.childExitCode, cancelSignal: outcome.cancelSignal };
  if (!outcome.providerStarted) {
    return {
      code: outcome.code,
      facts,
      finish: (exitCode) => {
        record({ exitCode, errno: outcome.spawnError, launched: false, ...(outcome.code === 'CANCELLED' ? { cancelled: true } : {}) });
        if (outcome.code === 'COMMAND_NOT_FOUND' || outcome.code === 'COMMAND_NOT_EXECUTABLE' || outcome.code === 'SPAWN_FAILED') {
          return guardEvent('error', receipt, { code: outcome.code, message: `${argv[0]}: ${outcome.spawnError ?? 'cannot be run'}`, exitCode });
        }
        return guardEvent(outcome.timedOut ? 'expired' : 'finished', receipt, { code: outcome.code, exitCode, launched: false, timedOut: outcome.timedOut, cancelled: outcome.cancelled });
      },
    };
  }
  return {
    code: outcome.code,
    facts,
    finish: (exitCode) => {
      record({ exitCode, timedOut: outcome.timedOut, durationMs, cleanupConfirmed: outcome.cleanupConfirmed });
      return guardEvent(outcome.timedOut ? 'expired' : 'finished', receipt, {
        timedOut: outcome.timedOut,
        exitCode,
        signal: outcome.signal,
        durationMs,
        cleanupConfirmed: outcome.cleanupConfirmed,
        ...(outcome.code !== null && outcome.code !== 'CHILD_FAILED' ? { code: outcome.code } : {}),
        ...(outcome.cancelled ? { cancelled: true } : {}),
      });
    },
  };
}
