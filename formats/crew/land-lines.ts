import { laneCheckLine, type LaneCheckEvent } from './lane-check.ts';
import { laneOrderLine, type LaneOrderEvent } from './lane-order.ts';

/**
 * What a lane reports on its way from done to landed, as facts; the crew's lines render
 * them. A pregate: the repository's checks at the lane's head. A receipt: the lane's
 * ship-run.json, bound to that head. A lane check: its files against the other open lanes'.
 * A lane order: the earlier lanes it waits for, whose plans name its files too.
 */
export type LandEvent = PregateEvent | ReceiptEvent | LaneCheckEvent | LaneOrderEvent | ReopenEvent;

export interface PregateEvent {
  readonly kind: 'pregate';
  readonly lane: string;
  readonly status: 'pass' | 'fail';
  readonly head: string;
  readonly tree: string;
  readonly checks: number;
  readonly failed: readonly string[];
  readonly ms: number;
  readonly file: string;
}

export interface ReceiptEvent {
  readonly kind: 'receipt';
  readonly lane: string;
  readonly head: string;
  readonly base: string;
  readonly branch: string;
  readonly tree: string | null;
  readonly spendUsd: number;
  readonly sessionKind: string;
  /** The lane's run directory, which holds ship-run.json and ship-receipt.md. */
  readonly run: string;
}

/**
 * A complete lane the merge train refused (RECEIPT_CARRY_PRODUCT_CHANGED) or could not
 * bring onto the base (LAND_CONFLICT), taken back to its agent by `crew run`: `base` the
 * base's tip laneward brings into its worktree, `from` the head the train refused.
 */
export interface ReopenEvent {
  readonly kind: 'reopen';
  readonly lane: string;
  readonly code: string;
  /** The base branch's name and its tip of the moment. */
  readonly branch: string;
  readonly base: string;
  readonly from: string;
}

const short = (sha: string | null) => (sha === null ? '-' : sha.slice(0, 12));

/** `PREGATE: lane=<id> status=pass|fail head=<12> tree=<12> checks=<n> failed=<ids>|- ms=<n> file=<pregate.json>` */
export function pregateLine(e: PregateEvent): string {
  return `PREGATE: lane=${e.lane} status=${e.status} head=${short(e.head)} tree=${short(e.tree)} checks=${e.checks} failed=${e.failed.length === 0 ? '-' : e.failed.join(',')} ms=${e.ms} file=${e.file}`;
}

/** `SHIP_RECEIPT: lane=<id> head=<12> base=<12> tree=<12>|- branch=<b> spend_usd=<x> session_kind=<k>` */
export function shipReceiptLine(e: ReceiptEvent): string {
  return `SHIP_RECEIPT: lane=${e.lane} head=${short(e.head)} base=${short(e.base)} tree=${short(e.tree)} branch=${e.branch} spend_usd=${e.spendUsd.toFixed(6)} session_kind=${e.sessionKind}`;
}

/** `LANE_REOPEN: lane=<id> code=<CODE> base=<12> from=<12> branch=<base branch>` */
export function reopenLine(e: ReopenEvent): string {
  return `LANE_REOPEN: lane=${e.lane} code=${e.code} base=${short(e.base)} from=${short(e.from)} branch=${e.branch}`;
}

/** The lines a land event prints, in order (a receipt ends with the ship result line). */
export function landLines(e: LandEvent): string[] {
  if (e.kind === 'pregate') return [pregateLine(e)];
  if (e.kind === 'lane_check') return [laneCheckLine(e)];
  if (e.kind === 'lane_order') return [laneOrderLine(e)];
  if (e.kind === 'reopen') return [reopenLine(e)];
  return [shipReceiptLine(e), `GSTACK_RESULT: skill=ship status=complete run=${e.run}`];
}
