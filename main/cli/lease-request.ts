import { exitStatus } from '../../formats/codes/exit-status.ts';
import { issue, renderIssueLine } from '../../formats/codes/issue.ts';
import { MAX_TIMER_MS } from '../../formats/supervision/limits.ts';
import { refusedOutcome, type Outcome } from '../../workers/supervise/outcome.ts';
import { SUPERVISION_DEFAULTS, type SupervisionSpec } from '../../workers/supervise/spec.ts';
import { leaseSpecFor, type LeaseRequest } from '../lease/lease-options.ts';
import { isDescriptorRefusal } from '../actions/load-descriptor.ts';
import { intOption, usage } from './args.ts';
import type { Io } from './io.ts';

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
} as const;

type Values = Partial<Record<Exclude<keyof typeof LEASE_OPTIONS, 'json'>, string>>;

/** Checks the shared options once, at the boundary. */
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
    timeoutMs: intOption('timeout-ms', need('timeout-ms'), 1, MAX_TIMER_MS)!,
    graceMs: intOption('grace-ms', values['grace-ms'], 0, MAX_TIMER_MS) ?? SUPERVISION_DEFAULTS.graceMs,
    teardownMs: intOption('teardown-ms', values['teardown-ms'], 1, MAX_TIMER_MS) ?? SUPERVISION_DEFAULTS.teardownMs,
    stdoutLimit: intOption('stdout-limit', values['stdout-limit'], 1, MAX_TIMER_MS) ?? SUPERVISION_DEFAULTS.stdoutLimit,
    stderrLimit: intOption('stderr-limit', values['stderr-limit'], 1, MAX_TIMER_MS) ?? SUPERVISION_DEFAULTS.stderrLimit,
  };
}

/**
 * Verifies the descriptor and builds the spec, or the refused outcome (nothing spawned)
 * with its issue line already printed.
 */
export function specOrRefusal(request: LeaseRequest, argv: readonly string[], startedAt: number, io: Io, context: string): SupervisionSpec | Outcome {
  try {
    return leaseSpecFor(request, argv, startedAt);
  } catch (error) {
    if (!isDescriptorRefusal(error)) throw error;
    io.err(renderIssueLine(context, issue(error.code, error.path, error.message)));
    return refusedOutcome(error.code, request.action, startedAt);
  }
}

/** An outcome as printed: every field, the exit status from the one table, whole ms. */
export function printable(outcome: Outcome): Outcome & { exitCode: number } {
  return { ...outcome, exitCode: exitStatus(outcome.code, outcome), durationMs: Math.round(outcome.durationMs) };
}
