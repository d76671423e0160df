import { randomBytes } from 'node:crypto';
import { EXIT } from '../../formats/codes.ts';
import { isLanewardError, LanewardError, toError } from '../../formats/error.ts';
import { issue, renderIssueLine } from '../../formats/issue.ts';
import { guardLine, isCanonicalUtc, makeReceipt, parseSeconds, type GuardEvent, type Receipt } from '../../formats/receipt.ts';
import { runUnderDeadline } from '../../workers/supervise/deadline-run.ts';
import { claimProbe, appendProbeRecord, probeLogPath, readProbeRecords } from '../deadline/probe-log.ts';
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
version 2). status reads the clock against the receipt. run re-validates the receipt,
then runs COMMAND (no shell) in its own process group for the time left, killing the
group with SIGKILL at the deadline and always when COMMAND finishes; every launch and
finish is appended to FILE.log.

Lines: QA_DEADLINE <json> (start and status on stdout, run on stderr on a line of its
own); --json prints the bare JSON object instead (start, status; run accepts it
and keeps its lines, which are JSON already).
Exit: 0 ok (run: the command's own status, 128+signal when killed), 124 expired or
timed out (a pre-expired or over-budget run starts nothing), 2 guard error, 126 command
not executable, 127 command not found, 130/143/129 guard interrupted (131/140/142 for
SIGQUIT/SIGUSR2/SIGALRM; 2 when its own output breaks).`;

const EXPIRED = 124;
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
    // Every guard failure is exit 2, usage included; the line names the code.
    const error = isLanewardError(caught) ? caught : new LanewardError('INTERNAL', toError(caught).message);
    io.err(renderIssueLine(`laneward deadline${sub === undefined ? '' : ` ${sub}`}`, issue(error.code, error.path, error.message)));
    return EXIT.usage;
  }
}

function event(kind: GuardEvent['event'], receipt: Receipt | null, extra: Record<string, unknown> = {}): GuardEvent {
  const now = Date.now();
  const deadline = receipt === null ? null : Date.parse(receipt.deadlineAt);
  const remainingMs = deadline === null ? 0 : Math.max(0, deadline - now);
  return {
    event: kind,
    observedAt: new Date(now).toISOString(),
    deadlineAt: receipt?.deadlineAt ?? null,
    remainingMs,
    expired: deadline !== null && now >= deadline,
    ...extra,
  };
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
  const payload = event('start', receipt, { startedAt: receipt.startedAt, budgetMs, ...(maxProbes === undefined ? {} : { maxProbes }) });
  print(io, payload, values.json === true);
  return payload.expired ? EXPIRED : EXIT.ok;
}

function status(args: readonly string[], io: Io): number {
  const { values, positionals } = parseCommand(args, HELP);
  if (values.help) return (io.out(DEADLINE_HELP), EXIT.ok);
  if (positionals.length !== 1) throw usage('expected FILE');
  const file = positionals[0]!;
  const receipt = readReceipt(file);
  const launched = readProbeRecords(probeLogPath(checkReceiptPath(file))).filter((r) => r.event === 'launch').length;
  const probes = receipt.version === 2 ? { maxProbes: receipt.maxProbes, probesUsed: Math.min(launched, receipt.maxProbes) } : { probesUsed: launched };
  const payload = event('status', receipt, probes);
  print(io, payload, values.json === true);
  return payload.expired ? EXPIRED : EXIT.ok;
}

async function run(args: readonly string[], io: Io): Promise<number> {
  const split = args.indexOf('--');
  const own = split === -1 ? args : args.slice(0, split);
  const command = split === -1 ? [] : args.slice(split + 1);
  const { values, positionals } = parseCommand(own, HELP);
  if (values.help) return (io.out(DEADLINE_HELP), EXIT.ok);
  if (positionals.length !== 1) throw usage('expected FILE -- COMMAND ARGS...');
  if (command.length === 0) throw usage('expected a COMMAND after --');
  const line = (payload: GuardEvent) => io.errRaw(guardLine(payload, true));
  let file: string;
  let receipt: Receipt;
  try {
    file = checkReceiptPath(positionals[0]!);
    receipt = readReceipt(file);
  } catch (error) {
    if (isLanewardError(error)) line(event('error', null, { code: error.code, message: error.message }));
    throw error;
  }
  const deadline = Date.parse(receipt.deadlineAt);
  if (deadline - Date.now() <= 0) {
    line(event('expired', receipt, { code: 'DEADLINE_EXPIRED', launched: false }));
    return EXPIRED;
  }
  const log = probeLogPath(file);
  const probe = `${process.pid}-${randomBytes(6).toString('hex')}`;
  const claim = claimProbe(log, probe, receipt.version === 2 ? receipt.maxProbes : undefined, new Date().toISOString());
  if (!claim.granted) {
    line(event('expired', receipt, { code: 'PROBE_BUDGET_EXHAUSTED', launched: false, probe: claim.index }));
    return EXPIRED;
  }
  // The clock is read again after the claim: reading a long probe log takes time too.
  const remainingMs = deadline - Date.now();
  if (remainingMs <= 0) {
    appendProbeRecord(log, { event: 'finish', probe, at: new Date().toISOString(), exitCode: EXPIRED, timedOut: true, launched: false });
    line(event('expired', receipt, { code: 'DEADLINE_EXPIRED', launched: false, probe: claim.index }));
    return EXPIRED;
  }

  const interrupt = interruptSignal();
  try {
    const outcome = await runUnderDeadline(
      { argv: command, remainingMs, onStarted: (pid) => line(event('started', receipt, { pid, probe: claim.index, argv0: command[0] })) },
      interrupt.signal,
    );
    const finishedAt = new Date().toISOString();
    if (outcome.kind === 'spawnFailed') {
      appendProbeRecord(log, { event: 'finish', probe, at: finishedAt, exitCode: outcome.exitCode, errno: outcome.errno });
      const code = outcome.exitCode === 127 ? 'COMMAND_NOT_FOUND' : 'COMMAND_NOT_EXECUTABLE';
      return (await flush(io, event('error', receipt, { code, message: `${command[0]}: ${outcome.errno}`, exitCode: outcome.exitCode }))) ? outcome.exitCode : EXIT.usage;
    }
    const timedOut = outcome.kind === 'timedOut';
    const outputBroken = interrupt.signal.aborted && interrupt.signal.reason === 'SIGPIPE';
    appendProbeRecord(log, { event: 'finish', probe, at: finishedAt, exitCode: outcome.exitCode, timedOut, durationMs: Math.round(outcome.durationMs) });
    const payload = event(timedOut ? 'expired' : 'finished', receipt, {
      timedOut,
      exitCode: outcome.exitCode,
      signal: outcome.signal,
      durationMs: Math.round(outcome.durationMs),
      ...(outcome.kind === 'cancelled' ? { cancelled: true, code: 'CANCELLED' } : {}),
      ...(timedOut ? { code: 'DEADLINE_EXPIRED' } : {}),
    });
    // Broken output is a guard error (exit 2) even though the child was stopped cleanly.
    return (await flush(io, payload)) && !outputBroken ? outcome.exitCode : EXIT.usage;
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
