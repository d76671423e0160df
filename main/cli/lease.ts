import { EXIT } from '../../formats/codes.ts';
import { isLanewardError } from '../../formats/error.ts';
import { exitStatus } from '../../formats/exit-status.ts';
import { issue, renderIssueLine } from '../../formats/issue.ts';
import { MAX_TIMER_MS } from '../../formats/limits.ts';
import { nowMs } from '../../workers/supervise/monotonic-timer.ts';
import { refusedOutcome, type Outcome } from '../../workers/supervise/outcome.ts';
import { SUPERVISION_DEFAULTS, type SupervisionSpec } from '../../workers/supervise/spec.ts';
import { supervise } from '../../workers/supervise/supervise.ts';
import { leaseSpecFor, type LeaseRequest } from '../lease/lease-options.ts';
import { intOption, parseCommand, usage } from './args.ts';
import { interruptSignal } from './interrupt.ts';
import type { Io } from './io.ts';

export const LEASE_HELP = `usage: laneward lease run --actions FILE --trust PUB --action NAME --timeout-ms N
                          [--grace-ms N] [--teardown-ms N] [--stdout-limit N]
                          [--stderr-limit N] [--json] -- COMMAND ARGS...

Runs COMMAND (no shell) once, in its own process group and session, as the logical
action NAME of the signed descriptor FILE (FILE.sig, verified with PUB before anything
starts). The action's timeout_mode decides: total_deadline keeps --timeout-ms as a fixed
deadline; admitted_progress_inactivity turns it, once the provider runs, into an
inactivity lease renewed only by admitted progress: a 0x01 byte on fd 3 (progress "fd";
the child gets LANEWARD_PROGRESS_FD=3) or a structured event a tracker admits from
stdout (step-lifecycle, claude-stream-json, codex-json, jsonl-counter). Prose, bytes,
EOF, duplicates and the terminal event never renew. The first mark must come within
timeout - cleanup_reserve_ms. After the provider exits, output draining gets
post_provider_ms once. Any failure tears the tree down: SIGTERM, --grace-ms (500),
SIGKILL, proven gone within --teardown-ms (5000). A descendant that calls setsid leaves
the session and cannot be followed.

Output: the child's stdout and stderr pass through (stdout limit 4 MiB, stderr 256 KiB),
then LEASE: status=... code=... exit=... on stderr. --json prints one outcome object on
stdout ({status, code, exitCode, signal, providerStarted, attempts, marks, durationMs,
cleanupConfirmed, action, timeoutMode, descriptorSha256, ...}, every field present, null
where it does not apply) and sends the child's stdout to stderr.
Exit: the child's own status when it finished by itself; 124 deadline, lease or
post-provider timeout; 3 refused before launch; 126/127 command not executable/found
(126 for any other spawn failure); 130/143/129 cancelled by SIGINT/SIGTERM/SIGHUP
(131/140/142 by SIGQUIT/SIGUSR2/SIGALRM, 141 when laneward's own output breaks);
1 other failures; 2 usage.

laneward lease fleet --count N [--jobs N] [--limit N] <the same options> -- COMMAND ARGS...
runs N copies across the worker pool (each child gets LANEWARD_FLEET_INDEX), at most
--limit at once (default N), the rest started in index order as slots free; a queued
child's budget runs from its slot. Prints one outcome per child as it ends
(--json; then one {"dispatch": {started, finished, marks, ...}} line) and LEASE_FLEET:
children=... at the end.`;

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

/** Splits `[options] -- COMMAND ARGS...`. */
export function splitCommand(args: readonly string[]): { own: readonly string[]; argv: string[] } {
  const split = args.indexOf('--');
  return split === -1 ? { own: args, argv: [] } : { own: args.slice(0, split), argv: args.slice(split + 1) };
}

/**
 * Verifies the descriptor and builds the spec, or the refused outcome (nothing spawned)
 * with its issue line already printed.
 */
export function specOrRefusal(request: LeaseRequest, argv: readonly string[], startedAt: number, io: Io, context: string): SupervisionSpec | Outcome {
  try {
    return leaseSpecFor(request, argv, startedAt);
  } catch (error) {
    if (!isLanewardError(error) || error.code !== 'DESCRIPTOR_INVALID') throw error;
    io.err(renderIssueLine(context, issue(error.code, error.path, error.message)));
    return refusedOutcome(error.code, request.action, startedAt);
  }
}

/** An outcome as printed: every field, the exit status from the one table, whole ms. */
export function printable(outcome: Outcome): Outcome & { exitCode: number } {
  return { ...outcome, exitCode: exitStatus(outcome.code, outcome), durationMs: Math.round(outcome.durationMs) };
}

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

  const spec = specOrRefusal(request, argv, startedAt, io, 'laneward lease run');
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
}

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
