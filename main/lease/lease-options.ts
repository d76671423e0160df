import type { ActionSpec } from '../../formats/schemas/actions.ts';
import type { SupervisionSpec } from '../../workers/supervise/spec.ts';
import { loadVerifiedAction } from '../actions/load-descriptor.ts';

/** The descriptor-independent part of a lease, already checked by whoever parsed it. */
export interface LeaseRequest {
  readonly file: string;
  readonly trust: string;
  readonly action: string;
  readonly timeoutMs: number;
  readonly graceMs: number;
  readonly teardownMs: number;
  readonly stdoutLimit: number;
  readonly stderrLimit: number;
}

/**
 * Verifies the descriptor and builds the spec; the timeout mode comes from the signed
 * action, never from the caller. A DESCRIPTOR_INVALID error propagates: nothing is spawned.
 */
export function leaseSpecFor(request: LeaseRequest, argv: readonly string[], startedAt: number): SupervisionSpec {
  const { spec: action, sha256 } = loadVerifiedAction(request.file, request.trust, request.action);
  return specFrom(action, sha256, request, argv, startedAt);
}

/** The spec of one launch under an action already verified (a crew verifies each action once). */
export function specFrom(action: ActionSpec, sha256: string, request: LeaseRequest, argv: readonly string[], startedAt: number): SupervisionSpec {
  return {
    argv,
    stdio: 'pipe',
    mode: action.timeout_mode,
    progress: action.timeout_mode === 'admitted_progress_inactivity' ? action.progress : null,
    timeoutMs: request.timeoutMs,
    cleanupReserveMs: action.cleanup_reserve_ms,
    postProviderMs: action.post_provider_ms,
    graceMs: request.graceMs,
    teardownMs: request.teardownMs,
    stdoutLimit: request.stdoutLimit,
    stderrLimit: request.stderrLimit,
    startedAt,
    action: request.action,
    descriptorSha256: sha256,
    ...(action.first_event_ms === undefined ? {} : { firstEventMs: action.first_event_ms }),
    ...(action.exit_after_terminal_ms === undefined ? {} : { exitAfterTerminalMs: action.exit_after_terminal_ms }),
  };
}
