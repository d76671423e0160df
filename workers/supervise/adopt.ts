import { TreeCensus } from './census.ts';
import { DeadlineTimer, nowMs } from './monotonic-timer.ts';
import { buildOutcome, type Outcome, type OutcomeCode } from './outcome.ts';
import { ProcSnapshots } from './proc-snapshot.ts';
import { canRun, readProcStat, statScratch } from './proc-stat.ts';
import type { OrphanRef, SupervisionHooks, SupervisionSpec } from './spec.ts';
import { onAbort } from './on-abort.ts';
import { teardownTree, type TeardownResult } from './teardown.ts';

/**
 * How often an adopted orphan is looked at. It is not our child: no exit event, no
 * waitpid, no pidfd in Node; /proc is the only way to see it end. Hint: one stat read per
 * orphan per interval, and orphans are at most a crew's limit.
 */
const LOOK_EVERY_MS = 50;

/** Whether the process `ref` names still runs: the same pid AND start time, and not a zombie. */
export function orphanRuns(ref: OrphanRef, scratch: Buffer = statScratch()): boolean {
  const stat = readProcStat(ref.pid, scratch);
  return stat !== undefined && stat.startTime === ref.ticks && canRun(stat);
}

/**
 * Tears an orphan's tree down with proof, as a supervision's own teardown does (its
 * group and session signalled, SIGTERM, grace, SIGKILL, gone proven from /proc). A
 * process that is no longer the one recorded is never signalled: confirmed, nothing sent.
 */
export async function tearDownOrphan(ref: OrphanRef, options: { graceMs: number; budgetMs: number }, snapshots = new ProcSnapshots()): Promise<TeardownResult> {
  const census = censusOf(ref, snapshots);
  if (census === undefined) return { confirmed: true, firstSignal: null, durationMs: 0 };
  return teardownTree(census, options);
}

/**
 * A census of the orphan's tree, or undefined when its pid no longer names it. `tag`: the
 * tree's variable, read back from the orphan's environment, so that its descendants that
 * left its session are found as its supervisor would have found them.
 */
export function censusOf(ref: OrphanRef, snapshots: ProcSnapshots, tag?: Buffer): TreeCensus | undefined {
  if (!orphanRuns(ref)) return undefined;
  const census = new TreeCensus(ref.pid, snapshots, tag);
  // The census reads the start time itself: the pid may have changed hands in between.
  return census.leaderStart === ref.ticks ? census : undefined;
}

/**
 * Supervises an orphan to its end instead of spawning: it is held to the spec's first
 * deadline (counted from `spec.startedAt`, which the caller sets from the recorded
 * dispatch), and a cancel or that deadline tears its tree down. When it ends by itself
 * the rest of its tree goes too, as with a provider's own exit. Its exit status cannot
 * be known (it is not our child): `childExitCode` is null and an exit by itself is `ok`;
 * whatever it produced is judged by its result file. Never rejects.
 */
export async function adoptOrphan(spec: SupervisionSpec, ref: OrphanRef, signal: AbortSignal | undefined, hooks: SupervisionHooks): Promise<Outcome> {
  const census = censusOf(ref, hooks.snapshots ?? new ProcSnapshots());
  if (census === undefined) return adoptedOutcome(spec, null, null, true, null);
  const stop = new AbortController();
  let code: OutcomeCode | null = null;
  let cancelSignal: string | null = null;
  const end = (found: OutcomeCode, signalName: string | null = null) => {
    if (code !== null || stop.signal.aborted) return;
    code = found;
    cancelSignal = signalName;
    stop.abort();
  };
  const onCancel = () => end('CANCELLED', typeof signal?.reason === 'string' && signal.reason.startsWith('SIG') ? signal.reason : 'SIGTERM');
  // Through the signal's one fan-out listener: many adoptions share a crew's stop.
  const unlinkCancel = signal === undefined ? () => undefined : onAbort(signal, onCancel);
  const expiry = spec.mode === 'admitted_progress_inactivity' ? 'LEASE_EXPIRED' : 'DEADLINE_EXPIRED';
  const timer = new DeadlineTimer(spec.startedAt + spec.timeoutMs - spec.cleanupReserveMs, () => end(expiry));
  try {
    await endOf(ref, stop.signal);
    // Cancelled or expired: SIGTERM and a grace; ended by itself: what is left goes at once.
    const teardown = await teardownTree(census, { graceMs: code === null ? 0 : spec.graceMs, budgetMs: spec.teardownMs });
    return adoptedOutcome(spec, code, cancelSignal, teardown.confirmed, teardown.firstSignal);
  } finally {
    timer.clear();
    unlinkCancel();
  }
}

/** Resolves when the orphan no longer runs, or when `stop` aborts. */
export function endOf(ref: OrphanRef, stop: AbortSignal): Promise<void> {
  const scratch = statScratch();
  return new Promise((resolve) => {
    const look = setInterval(() => {
      if (!orphanRuns(ref, scratch)) done();
    }, LOOK_EVERY_MS);
    const done = () => {
      clearInterval(look);
      stop.removeEventListener('abort', done);
      resolve();
    };
    stop.addEventListener('abort', done, { once: true });
    if (stop.aborted) done();
  });
}

function adoptedOutcome(spec: SupervisionSpec, code: OutcomeCode | null, cancelSignal: string | null, cleanupConfirmed: boolean, firstSignal: string | null): Outcome {
  // A teardown after an exit by itself that could not prove the tree gone is the attempt's failure.
  const found = code === null && !cleanupConfirmed ? 'TEARDOWN_UNPROVEN' : code;
  return buildOutcome({
    code: found,
    action: spec.action,
    timeoutMode: spec.mode,
    descriptorSha256: spec.descriptorSha256,
    childExitCode: null,
    signal: code !== null && firstSignal !== null ? firstSignal : null,
    cancelSignal,
    spawnError: null,
    deniedTool: null,
    providerStarted: true,
    // Nothing was spawned by this supervision.
    attempts: 0,
    marks: 0,
    durationMs: Math.max(0, nowMs() - spec.startedAt),
    cleanupConfirmed,
    expiryLateMs: null,
    firstSignalMs: null,
    goneMs: null,
  });
}
