import { join } from 'node:path';
import { LanewardError } from '../../formats/codes/error.ts';
import type { ResultCode } from '../../formats/codes/codes.ts';
import type { PregateCheck } from '../../formats/crew/pregate-checks.ts';
import type { CarryEvent, LaneLanded, LandStatus } from '../../formats/crew/land-train.ts';
import { makeDirs } from '../fs/make-dirs.ts';
import { runPregate, sweepChecks } from '../crew/pregate.ts';
import { readReceipt, writeCarriedReceipt, type ReadReceipt } from './carry.ts';
import { commitOf, treeOf, isAncestor, mergeBase, moveRef, productPatchId, rangeDiff } from './land-git.ts';
import { pushLane, remoteTip } from './land-push.ts';
import { LAND_DIR } from './land-record.ts';
import { addScratch, bringOnto, removeScratch, scratchPath } from './scratch.ts';

/** What every lane of one train shares. */
export interface TrainContext {
  readonly crew: string;
  readonly repo: string;
  readonly out: string;
  /** The branch the train moves (its name, without refs/heads/). */
  readonly base: string;
  readonly mode: 'rebase' | 'merge';
  readonly checks: readonly PregateCheck[];
  readonly push: string | null;
  readonly cancel: AbortSignal;
  readonly onCarry: (event: CarryEvent) => void;
}

export interface LaneToLand {
  readonly lane: string;
  readonly branch: string;
  readonly runDir: string;
}


/** A base that keeps moving under the train is retried this often before the lane gives up. */
const BASE_TRIES = 5;

/**
 * Lands one lane: its receipt checked against its branch's tip, then, in a scratch
 * worktree, the lane brought onto the base's tip, the receipt carried only when the
 * product diff's patch id is unchanged, the crew's checks at the merged tree, the lane's
 * branch pushed under its lease, the carried receipt written, the branch and then the base
 * moved, each by one update-ref pinned to the value read before. Every step before the
 * base's move can be redone: a train killed at any instant leaves the base at a lane
 * boundary, and the same train started again finds a lane it already landed (its tip in
 * the base) and lands it no second time.
 */
export async function landLane(ctx: TrainContext, lane: LaneToLand): Promise<LaneLanded> {
  const ref = `refs/heads/${lane.branch}`;
  let tip = await commitOf(ctx.repo, ref);
  let receipt = readReceipt(lane.runDir);
  const end = (status: LandStatus, code: ResultCode | null, from: string | null, to: string | null = null, already = false): LaneLanded => ({ lane: lane.lane, status, from, to, code, already, branch: lane.branch });
  if (receipt === null) return end('refused', 'LAND_NOT_READY', tip);
  if (tip === null) return end('refused', 'QUEUE_RECEIPT_STALE', null);
  let rolled = false;
  if (receipt.head !== tip) {
    // A train killed after it wrote the carried receipt and before it moved the branch: the receipt vouches for its head, so the branch follows it.
    const resumable = receipt.previous === tip && (await commitOf(ctx.repo, receipt.head)) === receipt.head;
    if (!resumable || !(await moveRef(ctx.repo, ref, receipt.head, tip))) return end('refused', 'QUEUE_RECEIPT_STALE', tip);
    tip = receipt.head;
    rolled = true;
  }
  const from = receipt.carriedFrom ?? tip;
  for (let attempt = 0; attempt < BASE_TRIES; attempt++) {
    const baseTip = await commitOf(ctx.repo, `refs/heads/${ctx.base}`);
    if (baseTip === null) throw new LanewardError('LAND_BASE_UNKNOWN', `the base branch ${ctx.base} is gone from ${ctx.repo}`, { path: ctx.repo });
    if (await isAncestor(ctx.repo, tip, baseTip)) {
      if (ctx.push !== null && !(await pushLane(ctx.repo, ctx.push, lane.branch, await remoteTip(ctx.repo, ctx.push, lane.branch), tip))) return end('refused', 'LAND_LEASE_REJECTED', from);
      return end('landed', null, from, tip, attempt === 0 && !rolled);
    }
    const step = await onto(ctx, lane, receipt, tip, baseTip);
    if (step.status !== 'moved') return end(step.status, step.code, from);
    // Landed, unless the base moved while the lane was checked: then again from its new tip.
    if (await moveRef(ctx.repo, `refs/heads/${ctx.base}`, step.tip, baseTip)) return end('landed', null, from, step.tip);
    tip = step.tip;
    receipt = readReceipt(lane.runDir) ?? receipt;
  }
  throw new LanewardError('WORKSPACE_FAILED', `the base ${ctx.base} moved under lane ${lane.lane} ${BASE_TRIES} times while the train checked it`, { path: ctx.repo });
}

type Step = { readonly status: 'moved'; readonly tip: string } | { readonly status: Exclude<LandStatus, 'landed'>; readonly code: ResultCode };

/** The lane brought onto `baseTip` in the scratch worktree, checked, pushed, its receipt carried and its branch moved; the base not yet. */
async function onto(ctx: TrainContext, lane: LaneToLand, receipt: ReadReceipt, tip: string, baseTip: string): Promise<Step> {
  const scratch = scratchPath(ctx.out, lane.lane);
  const oldBase = await mergeBase(ctx.repo, tip, baseTip);
  // The remote's branch as it is before the rebase: the lease the push is pinned to.
  const seen = ctx.push === null ? null : await remoteTip(ctx.repo, ctx.push, lane.branch);
  try {
    // A lane already on the base's tip needs neither a rebase nor a merge commit: the base fast-forwards to it.
    const onTip = oldBase === baseTip;
    await addScratch(ctx.repo, scratch, onTip || ctx.mode === 'rebase' ? tip : baseTip);
    const next = onTip ? tip : await bringOnto(scratch, ctx.mode, lane.lane, tip, baseTip, oldBase);
    if (next === null) return { status: 'conflict', code: 'LAND_CONFLICT' };
    const patchId = await productPatchId(ctx.repo, baseTip, next);
    if (next !== tip && patchId !== (await productPatchId(ctx.repo, oldBase, tip))) {
      ctx.onCarry({ kind: 'carry', lane: lane.lane, status: 'refused', code: 'RECEIPT_CARRY_PRODUCT_CHANGED' });
      return { status: 'refused', code: 'RECEIPT_CARRY_PRODUCT_CHANGED' };
    }
    const tree = await treeOf(ctx.repo, next);
    if (!(await checksPass(ctx, lane, scratch, receipt, tree))) return { status: 'check_failed', code: 'LAND_CHECK_FAILED' };
    if (seen !== null && !(await pushLane(ctx.repo, ctx.push!, lane.branch, seen, next))) return { status: 'refused', code: 'LAND_LEASE_REJECTED' };
    if (next === tip) {
      ctx.onCarry({ kind: 'carry', lane: lane.lane, status: 'current', head: tip });
      return { status: 'moved', tip };
    }
    const reason = `${ctx.mode} onto ${ctx.base} at ${baseTip.slice(0, 12)}, patch id unchanged`;
    const evidence = await rangeDiff(ctx.repo, oldBase, tip, baseTip, next);
    writeCarriedReceipt(receipt, { lane: lane.lane, runDir: lane.runDir, from: tip, to: next, oldBase, onto: baseTip, mode: ctx.mode, reason, patchId, rangeDiff: evidence, tree: ctx.checks.length === 0 ? null : tree, pregate: ctx.checks.length === 0 ? null : receipt.record.gated_tree === tree ? String(receipt.record.pregate) : `${LAND_DIR}/pregate.json` });
    ctx.onCarry({ kind: 'carry', lane: lane.lane, status: 'carried', from: tip, to: next, reason });
    if (!(await moveRef(ctx.repo, `refs/heads/${lane.branch}`, next, tip))) return { status: 'refused', code: 'QUEUE_RECEIPT_STALE' };
    return { status: 'moved', tip: next };
  } finally {
    await removeScratch(ctx.repo, scratch);
  }
}

/**
 * The crew's pregate at the merged tree, in the scratch worktree, into
 * `<run dir>/land/pregate.json`. Not run again at a tree the lane's own pregate passed at
 * (its receipt's gated_tree): the same checks at the same tree.
 */
async function checksPass(ctx: TrainContext, lane: LaneToLand, scratch: string, receipt: ReadReceipt, tree: string): Promise<boolean> {
  if (ctx.checks.length === 0 || receipt.record.gated_tree === tree) return true;
  // Fixed per lane, so a train started after a killed one tears down the check it left running.
  const tag = `land:${ctx.crew}:${lane.lane}`;
  if (!(await sweepChecks(tag))) throw new LanewardError('WORKSPACE_FAILED', `lane ${lane.lane}: a check a killed train left running could not be proven gone`, { path: lane.runDir });
  const dir = join(lane.runDir, LAND_DIR);
  makeDirs(dir);
  const result = await runPregate({ lane: lane.lane, worktree: scratch, runDir: dir, checks: ctx.checks, cancel: ctx.cancel, tag });
  if (ctx.cancel.aborted) throw new LanewardError('CANCELLED', `crew land stopped during the checks of lane ${lane.lane}`, { path: dir });
  return result.passed;
}
