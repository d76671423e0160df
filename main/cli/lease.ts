import { EXIT } from '../../formats/codes.ts';
import { isLanewardError } from '../../formats/error.ts';
import { issue, renderIssueLine } from '../../formats/issue.ts';
import { superviseLease } from '../../workers/supervise/lease.ts';
import { LEASE_DEFAULTS, type LeaseOutcome, type LeaseSpec } from '../../workers/supervise/lease-types.ts';
import { nowMs } from '../../workers/supervise/monotonic-timer.ts';
import { loadVerifiedAction } from '../actions/load-descriptor.ts';
import { intOption, parseCommand, usage } from './args.ts';
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
130/143/129 cancelled; 1 other failures; 2 usage.`;

const OPTIONS = {
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

const MAX_MS = 2_147_483_647;

export async function leaseCommand(args: readonly string[], io: Io): Promise<number> {
  const startedAt = nowMs();
  const [sub, ...rest] = args;
  if (sub === '--help' || sub === '-h' || sub === 'help') return (io.out(LEASE_HELP), EXIT.ok);
  if (sub !== 'run') throw usage(sub === undefined ? 'expected lease run' : `unknown lease subcommand ${JSON.stringify(sub)}`);
  const split = rest.indexOf('--');
  const { values, positionals } = parseCommand(split === -1 ? rest : rest.slice(0, split), OPTIONS, false);
  if (values.help) return (io.out(LEASE_HELP), EXIT.ok);
  const argv = split === -1 ? [] : rest.slice(split + 1);
  if (positionals.length > 0 || argv.length === 0) throw usage('expected -- COMMAND ARGS... after the options');
  const required = (name: 'actions' | 'trust' | 'action') => values[name] ?? (() => { throw usage(`--${name} is required`); })();
  const timeoutMs = intOption('timeout-ms', values['timeout-ms'], 1, MAX_MS) ?? (() => { throw usage('--timeout-ms is required'); })();
  const json = values.json === true;
  const [file, trust, name] = [required('actions'), required('trust'), required('action')];

  let action;
  try {
    action = loadVerifiedAction(file, trust, name);
  } catch (error) {
    if (!isLanewardError(error) || error.code !== 'DESCRIPTOR_INVALID') throw error;
    // Fails closed: nothing was spawned, and the outcome says so.
    io.err(renderIssueLine('laneward lease run', issue(error.code, error.path, error.message)));
    return report(io, json, { ...refusedOutcome(startedAt), action: name }, EXIT.refused);
  }
  const { spec: descriptor } = action;
  const spec: LeaseSpec = {
    argv,
    mode: descriptor.timeout_mode,
    progress: descriptor.timeout_mode === 'admitted_progress_inactivity' ? descriptor.progress : null,
    timeoutMs,
    cleanupReserveMs: descriptor.cleanup_reserve_ms,
    postProviderMs: descriptor.post_provider_ms,
    graceMs: intOption('grace-ms', values['grace-ms'], 0, MAX_MS) ?? LEASE_DEFAULTS.graceMs,
    teardownMs: intOption('teardown-ms', values['teardown-ms'], 1, MAX_MS) ?? LEASE_DEFAULTS.teardownMs,
    stdoutLimit: intOption('stdout-limit', values['stdout-limit'], 1, MAX_MS) ?? LEASE_DEFAULTS.stdoutLimit,
    stderrLimit: intOption('stderr-limit', values['stderr-limit'], 1, MAX_MS) ?? LEASE_DEFAULTS.stderrLimit,
    startedAt,
  };

  const cancel = new AbortController();
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  const onSignal = (signal: NodeJS.Signals) => cancel.abort(signal);
  for (const signal of signals) process.on(signal, onSignal);
  try {
    const toStdout = json ? io.errRaw : (io.outRaw ?? io.errRaw);
    const outcome = await superviseLease(spec, { onStdout: (chunk) => toStdout(chunk), onStderr: (chunk) => io.errRaw(chunk) }, cancel.signal);
    if (outcome.code !== null && outcome.code !== 'CHILD_FAILED') {
      io.err(renderIssueLine('laneward lease run', issue(outcome.code, '', `action ${name} (${spec.mode}) after ${Math.round(outcome.durationMs)} ms`)));
    }
    return report(io, json, { ...outcome, action: name, timeoutMode: spec.mode, descriptorSha256: action.sha256 }, outcome.exitCode);
  } finally {
    for (const signal of signals) process.off(signal, onSignal);
  }
}

function refusedOutcome(startedAt: number): LeaseOutcome {
  return {
    status: 'refused',
    code: 'DESCRIPTOR_INVALID',
    exitCode: EXIT.refused,
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
