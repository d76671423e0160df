import { EXIT } from '../../formats/codes.ts';
import { isLanewardError } from '../../formats/error.ts';
import { issue, renderIssueLine } from '../../formats/issue.ts';
import type { LeaseOutcome } from '../../workers/supervise/lease-types.ts';
import { signalExitCode } from '../../workers/supervise/process-group.ts';
import { superviseMany } from '../lease/supervise-many.ts';
import { isDescriptorRefusal, LEASE_OPTIONS, leaseRequest, leaseSpecFor, splitCommand } from '../lease/lease-options.ts';
import { defaultThreads } from '../pool.ts';
import { intOption, parseCommand, usage } from './args.ts';
import { interruptSignal } from './interrupt.ts';
import type { Io } from './io.ts';

/**
 * `lease fleet`: N copies of one command, each under its own lease, supervised at once
 * by the worker pool. The descriptor is verified once, before anything starts.
 */
export async function fleetCommand(args: readonly string[], io: Io, startedAt: number): Promise<number> {
  const { own, argv } = splitCommand(args);
  const { values, positionals } = parseCommand(own, { ...LEASE_OPTIONS, count: { type: 'string' }, jobs: { type: 'string' } }, false);
  if (positionals.length > 0 || argv.length === 0) throw usage('expected -- COMMAND ARGS... after the options');
  const count = intOption('count', values.count, 1, 100_000) ?? (() => { throw usage('--count is required'); })();
  const threads = intOption('jobs', values.jobs, 1, 256) ?? defaultThreads();
  const request = leaseRequest(values);
  let built;
  try {
    built = leaseSpecFor(request, argv, startedAt);
  } catch (error) {
    if (!isDescriptorRefusal(error) || !isLanewardError(error)) throw error;
    io.err(renderIssueLine('laneward lease fleet', issue(error.code, error.path, error.message)));
    return EXIT.refused;
  }
  const specs = Array.from({ length: count }, (_, index) => ({ ...built.spec, env: { LANEWARD_FLEET_INDEX: String(index) } }));
  const json = values.json === true;
  const interrupt = interruptSignal();
  let outcomes: LeaseOutcome[];
  try {
    outcomes = await superviseMany(specs, {
      threads,
      cancel: interrupt.signal,
      onOutcome: (index, outcome) => {
        if (json) io.out(JSON.stringify({ index, ...outcome, durationMs: Math.round(outcome.durationMs) }));
      },
    });
  } finally {
    interrupt.release();
  }
  const summary = summarize(outcomes);
  if (json) {
    io.out(JSON.stringify({ summary }));
  } else {
    const codes = Object.entries(summary.codes).map(([code, n]) => ` ${code}=${n}`).join('');
    io.out(
      `LEASE_FLEET: children=${summary.children} ok=${summary.ok} timeout=${summary.timeout} failed=${summary.failed} cancelled=${summary.cancelled} cleanup_unproven=${summary.cleanupUnproven}${codes}`,
    );
  }
  if (interrupt.signal.aborted) return signalExitCode(interrupt.signal.reason as NodeJS.Signals);
  return summary.ok === summary.children ? EXIT.ok : EXIT.fail;
}

function summarize(outcomes: readonly LeaseOutcome[]) {
  const count = (status: LeaseOutcome['status']) => outcomes.filter((o) => o.status === status).length;
  const codes: Record<string, number> = {};
  for (const outcome of outcomes) if (outcome.code !== null) codes[outcome.code] = (codes[outcome.code] ?? 0) + 1;
  return {
    children: outcomes.length,
    ok: count('ok'),
    timeout: count('timeout'),
    failed: count('failed'),
    cancelled: count('cancelled'),
    cleanupUnproven: outcomes.filter((o) => !o.cleanupConfirmed).length,
    codes: Object.fromEntries(Object.keys(codes).sort().map((code) => [code, codes[code]!])),
  };
}
