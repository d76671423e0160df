import { EXIT } from '../../formats/codes.ts';
import { isLanewardError, LanewardError, toError } from '../../formats/error.ts';
import { exitStatus, guardExitStatus } from '../../formats/exit-status.ts';
import { issue, renderIssueLine } from '../../formats/issue.ts';
import { guardLine, isCanonicalUtc, makeReceipt, parseSeconds, type GuardEvent } from '../../formats/receipt.ts';
import { guardEvent, runGuarded } from '../deadline/guard-run.ts';
import { launchesSoFar } from '../deadline/probe-claim.ts';
import { probeLogPath } from '../deadline/probe-log.ts';
import { checkReceiptPath, publishReceipt, readReceipt } from '../deadline/receipt-file.ts';
import { intOption, parseCommand, usage } from './args.ts';
import { interruptSignal } from './interrupt.ts';
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
const HELP = { help: { type: 'boolean', short: 'h' }, json: { type: 'boolean' } } as const;

export async function deadlineCommand(args: readonly string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  try {
    switch (sub) {
      case 'start':
        return start(rest, io);
      case 'status':
        return status(rest, io);
      case 'run':
        return await run(rest, io);
      case '--help':
      case '-h':
      case 'help':
        io.out(DEADLINE_HELP);
        return EXIT.ok;
      default:
        throw usage(sub === undefined ? 'expected start, status or run' : `unknown deadline subcommand ${JSON.stringify(sub)}`);
    }
  } catch (caught) {
    // Guard failures are exit 2, usage included; an unprovable probe budget is 124.
    const error = isLanewardError(caught) ? caught : new LanewardError('INTERNAL', toError(caught).message);
    io.err(renderIssueLine(`laneward deadline${sub === undefined ? '' : ` ${sub}`}`, issue(error.code, error.path, error.message)));
    return guardExitStatus(error.code);
  }
}

function print(io: Io, payload: GuardEvent, json: boolean): void {
  io.out(json ? JSON.stringify(payload) : guardLine(payload, false).slice(0, -1));
}

function start(args: readonly string[], io: Io): number {
  const { values, positionals } = parseCommand(args, { ...HELP, probes: { type: 'string' } });
  if (values.help) return (io.out(DEADLINE_HELP), EXIT.ok);
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
}

function status(args: readonly string[], io: Io): number {
  const { values, positionals } = parseCommand(args, HELP);
  if (values.help) return (io.out(DEADLINE_HELP), EXIT.ok);
  if (positionals.length !== 1) throw usage('expected FILE');
  const file = checkReceiptPath(positionals[0]!);
  const { receipt, identity } = readReceipt(file);
  const launched = launchesSoFar(probeLogPath(file), identity);
  const probes = receipt.version === 2 ? { maxProbes: receipt.maxProbes, probesUsed: Math.min(launched, receipt.maxProbes) } : { probesUsed: launched };
  const payload = guardEvent('status', receipt, probes);
  print(io, payload, values.json === true);
  return payload.expired ? exitStatus('DEADLINE_EXPIRED') : EXIT.ok;
}

async function run(args: readonly string[], io: Io): Promise<number> {
  const split = args.indexOf('--');
  const own = split === -1 ? args : args.slice(0, split);
  const command = split === -1 ? [] : args.slice(split + 1);
  const { values, positionals } = parseCommand(own, HELP);
  if (values.help) return (io.out(DEADLINE_HELP), EXIT.ok);
  if (positionals.length !== 1) throw usage('expected FILE -- COMMAND ARGS...');
  if (command.length === 0) throw usage('expected a COMMAND after --');
  // No place for the guard's evidence is broken output: refused before anything starts.
  if (io.stderrOpen?.() === false) return guardExitStatus('GUARD_IO');
  const line = (payload: GuardEvent) => (io.errGuard ?? io.errRaw)(guardLine(payload, true));
  const interrupt = interruptSignal();
  try {
    const guarded = await runGuarded(positionals[0]!, command, line, interrupt.signal);
    if (guarded.code === 'PROBE_LOG_INVALID') io.err(renderIssueLine('laneward deadline run', issue(guarded.code, probeLogPath(positionals[0]!), 'the launch record cannot be read back')));
    const exitCode = guardExitStatus(guarded.code, guarded.facts);
    // Broken or blocked output is a guard error (exit 2) even though the child was stopped cleanly.
    return (await flush(io, guarded.finish(exitCode))) ? exitCode : guardExitStatus('GUARD_IO');
  } finally {
    interrupt.release();
  }
}

/** The last receipt line gets at most five seconds; blocked or broken output is exit 2. */
async function flush(io: Io, payload: GuardEvent): Promise<boolean> {
  const text = guardLine(payload, true);
  if (io.flushErr !== undefined) return io.flushErr(text, FLUSH_MS);
  io.errRaw(text);
  return true;
}
