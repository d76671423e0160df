import type { ChildRecord } from '../../formats/supervision/child-record.ts';
import { orphanRuns, tearDownOrphan } from '../../workers/supervise/adopt.ts';
import { nowMs } from '../../workers/supervise/monotonic-timer.ts';
import type { SpawnedChild, SupervisionSpec } from '../../workers/supervise/spec.ts';
import type { TeardownResult } from '../../workers/supervise/teardown.ts';

/**
 * The record of a child just spawned under `spec`, to journal with what it runs for. Its
 * total deadline is kept as a wall-clock time (a later process has its own monotonic
 * origin per thread, and a wall clock is what a reader can check).
 */
export function childRecord(spec: SupervisionSpec, spawned: SpawnedChild): ChildRecord {
  const now = Date.now();
  return {
    pid: spawned.pid,
    pgid: spawned.pid,
    ticks: spawned.ticks ?? -1,
    at: new Date(now).toISOString(),
    mode: spec.mode,
    deadline_at: spec.mode === 'total_deadline' ? new Date(now + spawned.budgetLeftMs).toISOString() : null,
    reads_output: spec.progress !== null || spec.toolPolicy !== undefined,
    follows_file: followable(spec),
  };
}

/** Whether an adopter can read all its supervisor read: its stdout goes to a file, and no mark comes on fd 3. */
function followable(spec: SupervisionSpec): boolean {
  return spec.stdoutFile !== undefined && spec.progress !== 'fd';
}

/** Whether the recorded child still runs: the same pid and start time, not a zombie. */
export function childRuns(child: ChildRecord): boolean {
  return child.ticks >= 0 && orphanRuns({ pid: child.pid, ticks: child.ticks });
}

/**
 * What a driver does with a live orphan. Adopted when adoption loses nothing: its output
 * goes to a file the adopter follows from its start (its lease renewed from it, its tool
 * policy enforced, its stream's result, session and cost taken at its end), or a total
 * deadline, kept from the recorded dispatch, with no output to read. A lease renewed on
 * fd 3, or output that went through a pipe (an older build), died with its supervisor:
 * such an orphan is torn down with proof, as cancelled by the crew, and its work
 * dispatched anew.
 */
export function orphanPlan(child: ChildRecord): 'adopt' | 'tear_down' {
  if (followsFile(child)) return 'adopt';
  return child.mode === 'total_deadline' && child.deadline_at !== null && !child.reads_output ? 'adopt' : 'tear_down';
}

/** Whether the orphan's output is in a file its adopter follows (see {@link orphanPlan}). */
export function followsFile(child: ChildRecord): boolean {
  return child.follows_file === true;
}

/**
 * The spec that adopts `child` under `base` (the action it was dispatched under): nothing
 * is spawned, and the budget ends at the recorded deadline, however long ago it began.
 */
export function adoptionSpec(base: SupervisionSpec, child: ChildRecord): SupervisionSpec {
  // Under a lease the adoption's own lease runs from the moment it is adopted (see Supervision.run).
  if (child.deadline_at === null) return { ...base, argv: [], adopt: { pid: child.pid, ticks: child.ticks }, startedAt: nowMs() };
  const left = Date.parse(child.deadline_at ?? '') - Date.now();
  // Never past the action's own budget: a wall clock stepped back, or a bad record, gives it no more.
  const remaining = Number.isFinite(left) ? Math.min(Math.max(left, 0), base.timeoutMs - base.cleanupReserveMs) : 0;
  return { ...base, argv: [], adopt: { pid: child.pid, ticks: child.ticks }, startedAt: nowMs() + remaining - base.timeoutMs + base.cleanupReserveMs };
}

/** Tears the orphan's tree down with proof (its group and session, SIGTERM, grace, SIGKILL, gone). */
export function tearDownChild(child: ChildRecord, options: { graceMs: number; teardownMs: number }): Promise<TeardownResult> {
  if (child.ticks < 0) return Promise.resolve({ confirmed: false, firstSignal: null, durationMs: 0 });
  return tearDownOrphan({ pid: child.pid, ticks: child.ticks }, { graceMs: options.graceMs, budgetMs: options.teardownMs });
}
