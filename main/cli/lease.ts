import { issue, renderIssueLine } from '../../formats/codes/issue.ts';
import { nowMs } from '../../workers/supervise/monotonic-timer.ts';
import type { Outcome } from '../../workers/supervise/outcome.ts';
import { supervise } from '../../workers/supervise/supervise.ts';
import { usage } from './args.ts';
import { command, group } from './command.ts';
import { interruptSignal } from '../interrupt.ts';
import type { Io } from './io.ts';
import { FLEET } from './lease-fleet.ts';
import { LEASE_HELP } from './lease-help.ts';
import { LEASE_OPTIONS, leaseRequest, printable, specOrRefusal } from './lease-request.ts';

const RUN = command({
  name: 'run',
  help: LEASE_HELP,
  options: LEASE_OPTIONS,
  positionals: false,
  operands: true,
  run: async ({ values, operands }, io) => {
    const startedAt = nowMs();
    if (operands.length === 0) throw usage('expected -- COMMAND ARGS... after the options');
    const request = leaseRequest(values);
    const json = values.json === true;

    const spec = specOrRefusal(request, operands, startedAt, io, 'laneward lease run');
    if ('status' in spec) return report(io, json, spec);
    const interrupt = interruptSignal();
    try {
      const toStdout = json ? io.errRaw : (io.outRaw ?? io.errRaw);
      const outcome = await supervise(spec, interrupt.signal, { onStdout: (chunk) => toStdout(chunk), onStderr: (chunk) => io.errRaw(chunk) });
      if (outcome.code !== null && outcome.code !== 'CHILD_FAILED') {
        io.err(renderIssueLine('laneward lease run', issue(outcome.code, '', `action ${request.action} (${spec.mode}) after ${Math.round(outcome.durationMs)} ms`)));
      }
      return report(io, json, outcome);
    } finally {
      interrupt.release();
    }
  },
});

/** `laneward lease run|fleet`: supervised providers under a total deadline or a progress lease. */
export const LEASE = group({
  name: 'lease',
  help: LEASE_HELP,
  commands: [RUN, FLEET],
  missing: 'expected lease run or lease fleet',
});

function report(io: Io, json: boolean, outcome: Outcome): number {
  const shown = printable(outcome);
  if (json) {
    io.out(JSON.stringify(shown));
  } else {
    io.err(
      `LEASE: status=${shown.status} code=${shown.code ?? '-'} exit=${shown.exitCode} attempts=${shown.attempts} marks=${shown.marks} cleanup=${shown.cleanupConfirmed ? 'confirmed' : 'unproven'} durationMs=${shown.durationMs}`,
    );
  }
  return shown.exitCode;
}
