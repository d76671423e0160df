import { EXIT } from '../../formats/codes/codes.ts';
import { exitStatus, guardExitStatus } from '../../formats/codes/exit-status.ts';
import { issue, renderIssueLine } from '../../formats/codes/issue.ts';
import { guardLine, isCanonicalUtc, makeReceipt, parseSeconds, type GuardEvent } from '../../formats/supervision/receipt.ts';
import { guardEvent } from '../deadline/guard-event.ts';
import { launchesSoFar } from '../deadline/probe-claim.ts';
import { probeLogPath } from '../deadline/probe-log.ts';
import { checkReceiptPath, publishReceipt, readReceipt } from '../deadline/receipt-file.ts';
import { intOption, usage } from './args.ts';
import { command, group } from './command.ts';
import { interruptSignal } from '../interrupt.ts';
import type { Io } from './io.ts';

export const DEADLINE_HELP = `usage:
  laneward deadline start FILE SECONDS [EARLIER_UTC] [--probes N] [--json]
  laneward deadline status FILE [--json]
  laneward deadline run FILE -- COMMAND ARGS...

start publishes a read-only receipt at FILE (never replacing one): startedAt, deadlineAt,
budgetMs; SECONDS has at most 3 decimals (1 ms to 2147483647 ms); EARLIER_UTC (canonical
UTC ISO) only moves deadlineAt earlier. --probes N also limits run to N launches (receipt
version 2). status reads the clock against the receipt. run re-validates the receipt
(a receipt changed after start is refused), then runs COMMAND (no shell) in its own
process group and session for the time left, killing the group and any other process
of the session with SIGKILL at the deadline and always when COMMAND finishes; every
launch and finish is appended to FILE.log.

Limit: a descendant that calls setsid leaves the session; no supervisor can find or kill
it. Run probes that do not detach, or contain them from outside (a cgroup).

Lines: QA_DEADLINE <json> (start and status on stdout, run on stderr on a line of its
own); --json prints the bare JSON object instead (start, status; run accepts it
and keeps its lines, which are JSON already).
Exit: 0 ok (run: the command's own status, 128+signal when killed), 124 expired or
timed out (a pre-expired or over-budget run starts nothing; so does an unreadable
FILE.log, PROBE_LOG_INVALID), 2 guard error (stderr closed, blocked past five seconds
or broken included), 126 command not executable, 127 command not found, 130/143/129
guard interrupted (131/140/142 for SIGQUIT/SIGUSR2/SIGALRM).`;

/** The last guard line gets this long to reach a reader; then the guard exits 2. */
const FLUSH_MS = 5_000;
const JSON_OPTION = { json: { type: 'boolean' } } as const;

const START = command({
  name: 'start',
  help: DEADLINE_HELP,
  options: { ...JSON_OPTION, probes: { type: 'string' } },
  run: ({ values, positionals }, io) => {
    const [file, seconds, earlier, ...extra] = positionals;
    if (file === undefined || seconds === undefined || extra.length > 0) throw usage('expected FILE SECONDS [EARLIER_UTC]');
    const budgetMs = parseSeconds(seconds);
    if (budgetMs === undefined) throw usage(`expected SECONDS to be a decimal with at most 3 fractional digits from 0.001 to 2147483.647, got ${JSON.stringify(seconds)}`);
    if (earlier !== undefined && !isCanonicalUtc(earlier)) throw usage(`expected EARLIER_UTC to be a canonical UTC ISO time, got ${JSON.stringify(earlier)}`);
    const maxProbes = intOption('probes', values.probes, 1, 1_000_000);
    const receipt = makeReceipt(Date.now(), budgetMs, earlier === undefined ? undefined : Date.parse(earlier), maxProbes);
    publishReceipt(file, receipt);
    const payload = guardEvent('start', receipt, { startedAt: receipt.startedAt, budgetMs, ...(maxProbes === undefined ? {} : { maxProbes }) });
    print(io, payload, values.json === true);
    return payload.expired ? exitStatus('DEADLINE_EXPIRED') : EXIT.ok;
  },
});

const STATUS = command({
  name: 'status',
  help: DEADLINE_HELP,
  options: JSON_OPTION,
  run: ({ values, positionals }, io) => {
    if (positionals.length !== 1) throw usage('expected FILE');
    const file = checkReceiptPath(positionals[0]!);
    const { receipt, identity } = readReceipt(file);
    const launched = launchesSoFar(probeLogPath(file), identity);
    const probes = receipt.version === 2 ? { maxProbes: receipt.maxProbes, probesUsed: Math.min(launched, receipt.maxProbes) } : { probesUsed: launched };
    const payload = guardEvent('status', receipt, probes);
    print(io, payload, values.json === true);
    return payload.expired ? exitStatus('DEADLINE_EXPIRED') : EXIT.ok;
  },
});

const RUN = command({
  name: 'run',
  help: DEADLINE_HELP,
  options: JSON_OPTION,
  operands: true,
  run: async ({ positionals, operands }, io) => {
    if (positionals.length !== 1) throw usage('expected FILE -- COMMAND ARGS...');
    if (operands.length === 0) throw usage('expected a COMMAND after --');
    // No place for the guard's evidence is broken output: refused before anything starts.
    if (io.stderrOpen?.() === false) return guardExitStatus('GUARD_IO');
    const line = (payload: GuardEvent) => (io.errGuard ?? io.errRaw)(guardLine(payload, true));
    const interrupt = interruptSignal();
    try {
      // Loaded here: supervision and its crypto are the run's alone, not start's or status's.
      const { runGuarded } = await import('../deadline/guard-run.ts');
      const guarded = await runGuarded(positionals[0]!, operands, line, interrupt.signal);
      if (guarded.code === 'PROBE_LOG_INVALID') io.err(renderIssueLine('laneward deadline run', issue(guarded.code, probeLogPath(positionals[0]!), 'the launch record cannot be read back')));
      const exitCode = guardExitStatus(guarded.code, guarded.facts);
      // Broken or blocked output is a guard error (exit 2) even though the child was stopped cleanly.
      return (await flush(io, guarded.finish(exitCode))) ? exitCode : guardExitStatus('GUARD_IO');
    } finally {
      interrupt.release();
    }
  },
});

/** `laneward deadline start|status|run`: the probe deadline guard. */
export const DEADLINE = group({
  name: 'deadline',
  help: DEADLINE_HELP,
  commands: [START, STATUS, RUN],
  missing: 'expected start, status or run',
  // Guard failures are exit 2, usage included; an unprovable probe budget is 124.
  failure: { exit: (code) => guardExitStatus(code) },
});

function print(io: Io, payload: GuardEvent, json: boolean): void {
  io.out(json ? JSON.stringify(payload) : guardLine(payload, false).slice(0, -1));
}

/** The last receipt line gets at most five seconds; blocked or broken output is exit 2. */
async function flush(io: Io, payload: GuardEvent): Promise<boolean> {
  const text = guardLine(payload, true);
  if (io.flushErr !== undefined) return io.flushErr(text, FLUSH_MS);
  io.errRaw(text);
  return true;
}
