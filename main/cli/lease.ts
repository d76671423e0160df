import { EXIT } from '../../formats/codes.ts';
import { isLanewardError } from '../../formats/error.ts';
import { issue, renderIssueLine } from '../../formats/issue.ts';
import { superviseLease } from '../../workers/supervise/lease.ts';
import type { LeaseOutcome } from '../../workers/supervise/lease-types.ts';
import { nowMs } from '../../workers/supervise/monotonic-timer.ts';
import { isDescriptorRefusal, LEASE_OPTIONS, leaseRequest, leaseSpecFor, refusedOutcome, splitCommand } from '../lease/lease-options.ts';
import { parseCommand, usage } from './args.ts';
import { interruptSignal } from './interrupt.ts';
import type { Io } from './io.ts';

export const LEASE_HELP = `usage: laneward lease run --actions FILE --trust PUB --action NAME --timeout-ms N
                          [--grace-ms N] [--teardown-ms N] [--stdout-limit N]
                          [--stderr-limit N] [--json] -- COMMAND ARGS...

Runs COMMAND (no shell) once, in its own process group, as the logical action NAME of the
signed descriptor FILE (FILE.sig, verified with PUB before anything starts). The action's
timeout_mode decides: total_deadline keeps --timeout-ms as a fixed deadline;
admitted_progress_inactivity turns it, once the provider runs, into an inactivity lease
renewed only by admitted progress: a 0x01 byte on fd 3 (progress "fd"; the child gets
LANEWARD_PROGRESS_FD=3) or a structured event a tracker admits from stdout
(step-lifecycle, claude-stream-json, codex-json, jsonl-counter). Prose, bytes, EOF,
duplicates and the terminal event never renew. The first mark must come within
timeout - cleanup_reserve_ms. After the provider exits, output draining gets
post_provider_ms once. Any failure tears the group down: SIGTERM, --grace-ms (500),
SIGKILL, proven gone within --teardown-ms (5000).

Output: the child's stdout and stderr pass through (stdout limit 4 MiB, stderr 256 KiB),
then LEASE: status=... code=... exit=... on stderr. --json prints one outcome object on
stdout ({status, code, exitCode, signal, providerStarted, attempts, marks, durationMs,
cleanupConfirmed, ...}) and sends the child's stdout to stderr.
Exit: the child's own status when it finished by itself; 124 deadline, lease or
post-provider timeout; 3 refused before launch; 126/127 command not executable/found;
130/143/129 cancelled by SIGINT/SIGTERM/SIGHUP (131/140/142 by SIGQUIT/SIGUSR2/SIGALRM,
141 when laneward's own output breaks); 1 other failures; 2 usage.

laneward lease fleet --count N [--jobs N] <the same options> -- COMMAND ARGS...
runs N copies at once across the worker pool (each child gets LANEWARD_FLEET_INDEX),
prints one outcome per child as it ends (--json) and LEASE_FLEET: children=... at the end.`;

export async function leaseCommand(args: readonly string[], io: Io): Promise<number> {
  const startedAt = nowMs();
  const [sub, ...rest] = args;
  if (sub === '--help' || sub === '-h' || sub === 'help') return (io.out(LEASE_HELP), EXIT.ok);
  if (sub === 'fleet') return (await import('./lease-fleet.ts')).fleetCommand(rest, io, startedAt);
  if (sub !== 'run') throw usage(sub === undefined ? 'expected lease run or lease fleet' : `unknown lease subcommand ${JSON.stringify(sub)}`);
  const { own, argv } = splitCommand(rest);
  const { values, positionals } = parseCommand(own, LEASE_OPTIONS, false);
  if (values.help) return (io.out(LEASE_HELP), EXIT.ok);
  if (positionals.length > 0 || argv.length === 0) throw usage('expected -- COMMAND ARGS... after the options');
  const request = leaseRequest(values);
  const json = values.json === true;

  let built;
  try {
    built = leaseSpecFor(request, argv, startedAt);
  } catch (error) {
    if (!isDescriptorRefusal(error) || !isLanewardError(error)) throw error;
    // Fails closed: nothing was spawned, and the outcome says so.
    io.err(renderIssueLine('laneward lease run', issue(error.code, error.path, error.message)));
    return report(io, json, { ...refusedOutcome(startedAt), action: request.action }, EXIT.refused);
  }
  const { spec, sha256 } = built;
  const interrupt = interruptSignal();
  try {
    const toStdout = json ? io.errRaw : (io.outRaw ?? io.errRaw);
    const outcome = await superviseLease(spec, { onStdout: (chunk) => toStdout(chunk), onStderr: (chunk) => io.errRaw(chunk) }, interrupt.signal);
    if (outcome.code !== null && outcome.code !== 'CHILD_FAILED') {
      io.err(renderIssueLine('laneward lease run', issue(outcome.code, '', `action ${request.action} (${spec.mode}) after ${Math.round(outcome.durationMs)} ms`)));
    }
    return report(io, json, { ...outcome, action: request.action, timeoutMode: spec.mode, descriptorSha256: sha256 }, outcome.exitCode);
  } finally {
    interrupt.release();
  }
}

function report(io: Io, json: boolean, outcome: LeaseOutcome & Record<string, unknown>, exitCode: number): number {
  const durationMs = Math.round(outcome.durationMs);
  if (json) {
    io.out(JSON.stringify({ ...outcome, durationMs }));
  } else {
    io.err(
      `LEASE: status=${outcome.status} code=${outcome.code ?? '-'} exit=${exitCode} attempts=${outcome.attempts} marks=${outcome.marks} cleanup=${outcome.cleanupConfirmed ? 'confirmed' : 'unproven'} durationMs=${durationMs}`,
    );
  }
  return exitCode;
}
