import { join } from 'node:path';
import * as v from 'valibot';
import type { PregateCheck } from '../../formats/crew/pregate-checks.ts';
import { LanewardError } from '../../formats/codes/error.ts';
import { pregateSchema } from '../../formats/schemas/pregate.ts';
import { nowMs } from '../../workers/supervise/monotonic-timer.ts';
import { supervise } from '../../workers/supervise/supervise.ts';
import { tearDownOrphan } from '../../workers/supervise/adopt.ts';
import { findLiveByEnv } from '../../workers/supervise/find-by-env.ts';
import { guardSpec } from '../deadline/guard-run.ts';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import { git, gitFailure } from '../git/run-git.ts';

/**
 * The pregate: the repository's own checks, each run in the lane's worktree at its head
 * under the deadline guard's supervision (total deadline, zero grace, its whole process
 * group torn down when it ends, so nothing a check started outlives it), one after the
 * other, every one of them even after one failed (the agent is told of them all at once).
 * Its record, `pregate.json` in the lane's run directory per the `pregate` schema, is
 * bound to the head's tree: a pass at one tree says nothing of another.
 */

export const PREGATE_FILE = 'pregate.json';

/** The variable every check of a lane's pregate carries in its environment (see {@link sweepChecks}). */
export const PREGATE_VAR = 'LANEWARD_PREGATE';

/**
 * Tears down, proven gone from /proc, every check still running with `tag` in its
 * environment: what a crew that died in the middle of a pregate left, journaled or not
 * (a check is found by its environment, never by a pid that may name another process
 * now). False when one could not be proven gone.
 */
export async function sweepChecks(tag: string): Promise<boolean> {
  for (let found = findLiveByEnv(PREGATE_VAR, tag); found !== undefined; found = findLiveByEnv(PREGATE_VAR, tag)) {
    const down = await tearDownOrphan({ pid: found.pid, ticks: found.ticks }, { graceMs: 1_000, budgetMs: 10_000 });
    if (!down.confirmed) return false;
  }
  return true;
}

export type CheckStatus = 'pass' | 'fail' | 'incomplete' | 'not_installed';

export interface CheckResult {
  readonly id: string;
  readonly status: CheckStatus;
  readonly ms: number;
  readonly detail?: string;
  readonly tier?: string;
  readonly argv: readonly string[];
  readonly exit_code: number | null;
}

export interface PregateResult {
  readonly passed: boolean;
  readonly head: string;
  readonly tree: string;
  readonly checks: readonly CheckResult[];
  readonly ms: number;
  /** pregate.json (absolute). */
  readonly file: string;
}

export interface PregateRun {
  readonly lane: string;
  readonly worktree: string;
  readonly runDir: string;
  readonly checks: readonly PregateCheck[];
  readonly cancel: AbortSignal;
  /** LANEWARD_PREGATE in every check's environment: the lane's record keeps it, to find a check a dead crew left. */
  readonly tag: string;
}

/** What of a check's output its detail quotes: the end, where a test runner says what failed. */
const TAIL_BYTES = 600;

/**
 * Runs every check at the worktree's head and writes pregate.json (atomically). A head
 * that moved while the checks ran (a check that committed) fails the pregate: its checks
 * vouch for a tree that is no longer the lane's. Throws WORKSPACE_FAILED when git cannot
 * read the head; a cancelled run returns what it has, its check `incomplete`.
 */
export async function runPregate(run: PregateRun): Promise<PregateResult> {
  const started = nowMs();
  const head = await revParse(run.worktree, 'HEAD^{commit}');
  const tree = await revParse(run.worktree, `${head}^{tree}`);
  const checks: CheckResult[] = [];
  for (const check of run.checks) {
    checks.push(run.cancel.aborted ? { id: check.id, status: 'incomplete', ms: 0, detail: 'the crew stopped before it ran', argv: check.argv, exit_code: null, ...(check.tier === null ? {} : { tier: check.tier }) } : await runCheck(check, run.worktree, run.cancel, run.tag));
  }
  const after = await revParse(run.worktree, 'HEAD^{commit}');
  if (after !== head) checks.push({ id: 'head', status: 'fail', ms: 0, detail: `the head moved from ${head} to ${after} while the checks ran`, argv: [], exit_code: null });
  const ms = Math.round(nowMs() - started);
  const record = { schema_version: 1, run: run.lane, tree, head, checks, stage1_ms: ms };
  // Ours by construction; checked anyway, so a record the contract's validators refuse is never written.
  const parsed = v.safeParse(pregateSchema, record);
  if (!parsed.success) throw new LanewardError('INTERNAL', `pregate.json of lane ${run.lane} does not match the pregate schema: ${parsed.issues[0].message}`, { path: join(run.runDir, PREGATE_FILE) });
  const file = join(run.runDir, PREGATE_FILE);
  writeFileAtomic(file, `${JSON.stringify(record, null, 2)}\n`, 0o644, true);
  return { passed: checks.every((c) => c.status === 'pass'), head, tree, checks, ms, file };
}

async function runCheck(check: PregateCheck, cwd: string, cancel: AbortSignal, tag: string): Promise<CheckResult> {
  let tail = Buffer.alloc(0);
  const keep = (chunk: Buffer) => {
    tail = Buffer.concat([tail, chunk]);
    if (tail.length > TAIL_BYTES) tail = tail.subarray(tail.length - TAIL_BYTES);
  };
  // The guard's supervision with the output piped to us, not inherited: a check's output
  // is the lane's, never the crew's stdout.
  const spec = { ...guardSpec(check.argv, check.timeoutMs, nowMs()), stdio: 'pipe' as const, cwd, env: { [PREGATE_VAR]: tag } };
  const outcome = await supervise(spec, cancel, { onStdout: keep, onStderr: keep });
  const ms = Math.round(outcome.durationMs);
  const tier = check.tier === null ? {} : { tier: check.tier };
  const said = oneLine(tail.toString('utf8'));
  const base = { id: check.id, ms, argv: check.argv, exit_code: outcome.childExitCode, ...tier };
  if (outcome.code === 'COMMAND_NOT_FOUND' || outcome.code === 'COMMAND_NOT_EXECUTABLE') return { ...base, status: 'not_installed', detail: `${check.argv[0]}: ${outcome.spawnError ?? 'cannot be run'} (${outcome.code})` };
  if (outcome.timedOut) return { ...base, status: 'incomplete', detail: `timed out after ${check.timeoutMs} ms${said === '' ? '' : `: ${said}`}` };
  if (outcome.cancelled) return { ...base, status: 'incomplete', detail: 'the crew stopped while it ran' };
  if (outcome.code === null && outcome.childExitCode === 0) return { ...base, status: 'pass' };
  const how = outcome.signal !== null ? `ended by ${outcome.signal}` : outcome.childExitCode !== null ? `exit ${outcome.childExitCode}` : (outcome.code ?? 'failed');
  return { ...base, status: 'fail', detail: `${how}${said === '' ? '' : `: ${said}`}` };
}

/** A check's output as one line: control characters and runs of space folded. */
function oneLine(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f]+/g, ' ').replace(/ {2,}/g, ' ').trim();
}

async function revParse(cwd: string, rev: string): Promise<string> {
  const args = ['rev-parse', '--verify', '--quiet', '--end-of-options', rev];
  const result = await git(args, { cwd });
  if (result.status !== 0) throw new LanewardError('WORKSPACE_FAILED', `reading ${rev} in ${cwd}: ${gitFailure(args, result)}`, { path: cwd });
  return result.stdout.trim();
}

/** The guidance an agent gets for a pregate that failed: each check that did not pass, with what it said. */
export function pregateGuidance(result: PregateResult): string {
  const failed = result.checks.filter((c) => c.status !== 'pass');
  const each = failed.map((c) => `${c.id} (${c.argv.join(' ')}) ${c.status}${c.detail === undefined ? '' : `: ${c.detail}`}`);
  return `the pregate failed at ${result.head.slice(0, 12)}: ${each.join('; ')}. Fix it in the worktree, then finish again.`;
}
