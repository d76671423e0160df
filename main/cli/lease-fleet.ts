import { EXIT } from '../../formats/codes/codes.ts';
import { exitStatus } from '../../formats/codes/exit-status.ts';
import { nowMs } from '../../workers/supervise/monotonic-timer.ts';
import type { Outcome } from '../../workers/supervise/outcome.ts';
import { intOption, usage } from './args.ts';
import { command } from './command.ts';
import { interruptSignal } from '../interrupt.ts';
import { LEASE_HELP } from './lease-help.ts';
import { LEASE_OPTIONS, leaseRequest, printable, specOrRefusal } from './lease-request.ts';

/**
 * `lease fleet`: N copies of one command, each under its own lease, supervised at once
 * by the worker pool. The descriptor is verified once, before anything starts; a refused
 * descriptor prints its one refused outcome (under --json) and starts nothing.
 */
export const FLEET = command({
  name: 'fleet',
  help: LEASE_HELP,
  options: { ...LEASE_OPTIONS, count: { type: 'string' }, jobs: { type: 'string' }, limit: { type: 'string' } },
  positionals: false,
  operands: true,
  run: async ({ values, operands }, io) => {
    const startedAt = nowMs();
    // The pool loads only for a fleet: `lease run` starts without it.
    const [{ superviseMany }, { defaultThreads }] = await Promise.all([import('../lease/supervise-many.ts'), import('../pool.ts')]);
    if (operands.length === 0) throw usage('expected -- COMMAND ARGS... after the options');
    const count = intOption('count', values.count, 1, 100_000) ?? (() => { throw usage('--count is required'); })();
    const threads = intOption('jobs', values.jobs, 1, 256) ?? defaultThreads();
    const limit = intOption('limit', values.limit, 1, 100_000) ?? count;
    const request = leaseRequest(values);
    const json = values.json === true;
    const spec = specOrRefusal(request, operands, startedAt, io, 'laneward lease fleet');
    if ('status' in spec) {
      if (json) io.out(JSON.stringify(printable(spec)));
      return exitStatus(spec.code);
    }
    const specs = Array.from({ length: count }, (_, index) => ({ ...spec, env: { LANEWARD_FLEET_INDEX: String(index) } }));
    const interrupt = interruptSignal();
    let outcomes: Outcome[];
    try {
      outcomes = await superviseMany(specs, {
        threads,
        limit,
        cancel: interrupt.signal,
        onStats: (stats) => {
          if (json) io.out(JSON.stringify({ dispatch: { started: stats.started, finished: stats.finished, marks: stats.marks, running: stats.running, queued: stats.queued, renewals: stats.renewalLatencyMs.length } }));
        },
        onOutcome: (index, outcome) => {
          if (json) io.out(JSON.stringify({ index, ...printable(outcome) }));
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
    if (interrupt.signal.aborted) return exitStatus('CANCELLED', { cancelSignal: String(interrupt.signal.reason) });
    return summary.ok === summary.children ? EXIT.ok : EXIT.fail;
  },
});

function summarize(outcomes: readonly Outcome[]) {
  const count = (status: Outcome['status']) => outcomes.filter((o) => o.status === status).length;
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
