import { isLanewardError } from '../../formats/error.ts';
import type { ActionSpec } from '../../formats/schemas/actions.ts';
import { LEASE_DEFAULTS, type LeaseOutcome, type LeaseSpec } from '../../workers/supervise/lease-types.ts';
import { nowMs } from '../../workers/supervise/monotonic-timer.ts';
import { loadVerifiedAction } from '../actions/load-descriptor.ts';
import { intOption, usage } from '../cli/args.ts';

const MAX_MS = 2_147_483_647;

/** The options `lease run` and `lease fleet` share, as parseArgs declares them. */
export const LEASE_OPTIONS = {
  actions: { type: 'string' },
  trust: { type: 'string' },
  action: { type: 'string' },
  'timeout-ms': { type: 'string' },
  'grace-ms': { type: 'string' },
  'teardown-ms': { type: 'string' },
  'stdout-limit': { type: 'string' },
  'stderr-limit': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = Partial<Record<Exclude<keyof typeof LEASE_OPTIONS, 'json' | 'help'>, string>>;

/** The descriptor-independent part of a lease, checked once at the boundary. */
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

export function leaseRequest(values: Values): LeaseRequest {
  const need = (name: 'actions' | 'trust' | 'action' | 'timeout-ms') => {
    const value = values[name];
    if (value === undefined) throw usage(`--${name} is required`);
    return value;
  };
  return {
    file: need('actions'),
    trust: need('trust'),
    action: need('action'),
    timeoutMs: intOption('timeout-ms', need('timeout-ms'), 1, MAX_MS)!,
    graceMs: intOption('grace-ms', values['grace-ms'], 0, MAX_MS) ?? LEASE_DEFAULTS.graceMs,
    teardownMs: intOption('teardown-ms', values['teardown-ms'], 1, MAX_MS) ?? LEASE_DEFAULTS.teardownMs,
    stdoutLimit: intOption('stdout-limit', values['stdout-limit'], 1, MAX_MS) ?? LEASE_DEFAULTS.stdoutLimit,
    stderrLimit: intOption('stderr-limit', values['stderr-limit'], 1, MAX_MS) ?? LEASE_DEFAULTS.stderrLimit,
  };
}

/** Splits `[options] -- COMMAND ARGS...`. */
export function splitCommand(args: readonly string[]): { own: readonly string[]; argv: string[] } {
  const split = args.indexOf('--');
  return split === -1 ? { own: args, argv: [] } : { own: args.slice(0, split), argv: args.slice(split + 1) };
}

/**
 * Verifies the descriptor and builds the spec; the timeout mode comes from the signed
 * action, never from the caller. A DESCRIPTOR_INVALID error propagates: nothing is spawned.
 */
export function leaseSpecFor(request: LeaseRequest, argv: readonly string[], startedAt: number): { spec: LeaseSpec; sha256: string } {
  const { spec: action, sha256 } = loadVerifiedAction(request.file, request.trust, request.action);
  return { spec: specFrom(action, request, argv, startedAt), sha256 };
}

function specFrom(action: ActionSpec, request: LeaseRequest, argv: readonly string[], startedAt: number): LeaseSpec {
  return {
    argv,
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
  };
}

export function isDescriptorRefusal(error: unknown): boolean {
  return isLanewardError(error) && error.code === 'DESCRIPTOR_INVALID';
}

/** The outcome of an attempt refused before launch: nothing was spawned. */
export function refusedOutcome(startedAt: number): LeaseOutcome {
  return {
    status: 'refused',
    code: 'DESCRIPTOR_INVALID',
    exitCode: 3,
    childExitCode: null,
    signal: null,
    providerStarted: false,
    attempts: 0,
    marks: 0,
    durationMs: nowMs() - startedAt,
    cleanupConfirmed: true,
    timedOut: false,
    leaseExpired: false,
    cancelled: false,
    expiryLateMs: null,
    firstSignalMs: null,
    goneMs: null,
  };
}
