import { join } from 'node:path';
import { LanewardError } from '../../formats/codes/error.ts';
import { pregateChecks } from '../../formats/crew/pregate-checks.ts';
import { landOrder, type CarryEvent, type LaneLanded, type LaneTasks } from '../../formats/crew/land-train.ts';
import { tryReadBounded } from '../fs/read-bounded.ts';
import { git } from '../git/run-git.ts';
import { listWorktrees } from '../git/worktree-list.ts';
import type { LoadedCrew } from '../crew/load-crew.ts';
import { claimOut } from '../crew/out-claim.ts';
import type { Store } from '../store/store.ts';
import { commitOf } from './land-git.ts';
import { landLane, type TrainContext } from './land-lane.ts';
import { recordLanded } from './land-record.ts';
import { pushBase } from './land-push.ts';

export interface TrainOptions {
  readonly loaded: LoadedCrew;
  readonly store: Store;
  /** The remote to push each landed lane's branch and the base to; null: nothing pushed. */
  readonly push: string | null;
  readonly cancel: AbortSignal;
  readonly onCarry: (event: CarryEvent) => void;
  readonly onLane: (landed: LaneLanded) => void;
}

export interface TrainResult {
  readonly lanes: readonly LaneLanded[];
  /** The base's tip when the train ended. */
  readonly base: string;
  readonly branch: string;
  /** The remote refused the base's fast-forward (LAND_PUSH_REJECTED): the lanes landed here stand. */
  readonly pushFailure: LanewardError | null;
}

/**
 * The crew's merge train: every lane of the crew in dependency order, each landed on the
 * base's tip of the moment or typed why not. The train's progress is derived from git and
 * the lanes' receipts alone (a landed lane's tip is in the base, its receipt names it), so
 * nothing but git's refs and the receipts' atomic files holds it, and a train started
 * again after a kill goes on from the boundary it stopped at. The out directory is
 * claimed for the train's life: no crew run nor a second train drives its lanes meanwhile.
 */
export async function landTrain(options: TrainOptions): Promise<TrainResult> {
  const { loaded } = options;
  const workspace = loaded.workspace;
  if (workspace === null) throw new LanewardError('CREW_INVALID', 'crew land moves a base branch of the crew\'s repository, and the crew file names no workspace', { path: loaded.file });
  const release = claimOut(loaded.out, loaded.crew.crew, loaded.file);
  try {
    const base = await baseBranch(loaded, workspace.repo);
    const held = await checkedOut(workspace.repo);
    if (held.has(`refs/heads/${base}`)) throw new LanewardError('LAND_CHECKED_OUT', `the base ${base} is checked out in ${held.get(`refs/heads/${base}`)}`, { path: held.get(`refs/heads/${base}`)! });
    const ctx: TrainContext = {
      crew: loaded.crew.crew,
      repo: workspace.repo,
      out: loaded.out,
      base,
      mode: loaded.crew.land?.mode ?? 'rebase',
      checks: loaded.crew.pregate === undefined ? [] : pregateChecks(loaded.crew.pregate, loaded.crew.limits.timeout_ms),
      push: options.push,
      cancel: options.cancel,
      onCarry: options.onCarry,
    };
    const progress = new Map(loaded.lanes.map((l) => [l.id, options.store.crewLanes.get([loaded.crew.crew, l.id])]));
    const runDir = (id: string) => progress.get(id)?.runDir ?? join(loaded.out, id);
    const { order, deps } = landOrder(loaded.lanes.map((l) => laneTasks(l.id, runDir(l.id))));
    const done = new Map<string, LaneLanded>();
    for (const id of order) {
      if (options.cancel.aborted) throw new LanewardError('CANCELLED', 'crew land stopped between lanes', { path: loaded.out });
      const p = progress.get(id);
      const branch = p?.branch ?? null;
      const tip = branch === null ? null : await commitOf(workspace.repo, `refs/heads/${branch}`);
      const notReady = (code: LaneLanded['code']): LaneLanded => ({ lane: id, status: 'refused', from: tip, to: null, code, already: false, branch });
      let landed: LaneLanded;
      if (p?.stage !== 'complete' || branch === null || deps.get(id)!.some((d) => done.get(d)?.status !== 'landed')) landed = notReady('LAND_NOT_READY');
      else if (held.has(`refs/heads/${branch}`)) landed = notReady('LAND_CHECKED_OUT');
      else landed = await landLane(ctx, { lane: id, branch, runDir: p.runDir });
      done.set(id, landed);
      if (p !== undefined) recordLanded(p.runDir, landed, base);
      options.onLane(landed);
    }
    const tip = (await commitOf(workspace.repo, `refs/heads/${base}`)) ?? '';
    // Once, at the end: every lane landed is in it, and so is what a killed train left unpushed.
    let pushFailure: LanewardError | null = null;
    if (options.push !== null && tip !== '') {
      try {
        await pushBase(workspace.repo, options.push, base, tip);
      } catch (error) {
        if (!(error instanceof LanewardError) || error.code !== 'LAND_PUSH_REJECTED') throw error;
        pushFailure = error;
      }
    }
    return { lanes: [...done.values()], base: tip, branch: base, pushFailure };
  } finally {
    release();
  }
}

/**
 * The branch the train moves: the crew file's `land.base`, else the workspace's base when
 * it names a local branch, else the branch the repository's HEAD is on.
 */
async function baseBranch(loaded: LoadedCrew, repo: string): Promise<string> {
  const named = loaded.crew.land?.base ?? loaded.workspace!.base;
  const short = named.startsWith('refs/heads/') ? named.slice('refs/heads/'.length) : named;
  if (named !== 'HEAD') {
    if ((await commitOf(repo, `refs/heads/${short}`)) !== null) return short;
    throw new LanewardError('LAND_BASE_UNKNOWN', `${JSON.stringify(named)} is not a local branch of ${repo}`, { path: loaded.file });
  }
  const head = await git(['symbolic-ref', '--quiet', 'HEAD'], { cwd: repo });
  if (head.status === 0 && head.stdout.trim().startsWith('refs/heads/')) return head.stdout.trim().slice('refs/heads/'.length);
  throw new LanewardError('LAND_BASE_UNKNOWN', `the crew's base is HEAD and HEAD of ${repo} is detached`, { path: loaded.file });
}

/** Branch ref -> the worktree it is checked out in (worktrees whose directory is gone hold nothing). */
async function checkedOut(repo: string): Promise<Map<string, string>> {
  const listed = await listWorktrees(repo);
  if (typeof listed === 'string') throw new LanewardError('WORKSPACE_FAILED', `listing the worktrees of ${repo}: ${listed}`, { path: repo });
  return new Map(listed.filter((w) => w.branch !== null && w.prunable === null && !w.bare).map((w) => [w.branch!, w.path]));
}

/** The lane's exported tasks: ids, pr labels and what they depend on (none before an export). */
function laneTasks(lane: string, runDir: string): LaneTasks {
  const read = tryReadBounded(join(runDir, 'tasks.jsonl'), 16 * 1024 * 1024);
  const ids: string[] = [];
  const prs: string[] = [];
  const dependsOn: string[] = [];
  if (read.ok) {
    for (const line of read.bytes.toString('utf8').split('\n')) {
      if (line.trim() === '') continue;
      let row: { id?: unknown; pr?: unknown; depends_on?: unknown } | null;
      try {
        row = JSON.parse(line) as typeof row;
      } catch {
        continue;
      }
      if (typeof row?.id === 'string') ids.push(row.id);
      if (typeof row?.pr === 'string') prs.push(row.pr);
      if (Array.isArray(row?.depends_on)) for (const d of row.depends_on) if (typeof d === 'string') dependsOn.push(d);
    }
  }
  return { lane, ids, prs, dependsOn };
}
