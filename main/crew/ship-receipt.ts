import { join } from 'node:path';
import * as v from 'valibot';
import { LanewardError } from '../../formats/codes/error.ts';
import type { ReceiptEvent } from '../../formats/crew/land-lines.ts';
import { shipReceiptLine } from '../../formats/crew/land-lines.ts';
import { shipReceiptSchema } from '../../formats/schemas/ship-receipt.ts';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import { tryReadBounded } from '../fs/read-bounded.ts';
import { git, gitFailure } from '../git/run-git.ts';

/**
 * A lane's ship receipt: `ship-run.json` (the `ship-receipt` schema) and `ship-receipt.md`
 * (the receipt block) in its run directory, bound to the head its pregate passed at and
 * that its branch's tip is when written. The receipt is what a merge train trusts: it is
 * current only while the branch's tip is still its head ({@link receiptCurrency}).
 */

export const SHIP_RUN_FILE = 'ship-run.json';
export const SHIP_RECEIPT_FILE = 'ship-receipt.md';

export interface ReceiptFacts {
  readonly crew: string;
  /** The crew run's id (main/crew/crew-run-id.ts). */
  readonly crewRun: string;
  readonly lane: string;
  readonly runDir: string;
  readonly repo: string;
  readonly branch: string;
  /** The head the lane's record names: its branch's tip after its last turn. */
  readonly head: string;
  readonly base: string;
  /** The tree the pregate passed at; null for a crew with no pregate. */
  readonly tree: string | null;
  readonly spendUsd: number;
}

/**
 * The review run's counters and session kind, from its exported run.json (the lane
 * exported it just before): null counters when there is none to read.
 */
export function reviewFacts(runDir: string): { readonly loop: Record<string, unknown> | null; readonly sessionKind: string | null } {
  const read = tryReadBounded(join(runDir, 'run.json'), 16 * 1024 * 1024);
  if (!read.ok) return { loop: null, sessionKind: null };
  try {
    const m = JSON.parse(Buffer.from(read.bytes).toString('utf8')) as { run?: unknown; status?: unknown; gate_rev?: unknown; session_kind?: unknown; counts?: Record<string, unknown>; phases?: Record<string, unknown> };
    const loop = { run: m.run ?? null, status: m.status ?? null, gate_rev: m.gate_rev ?? null, phases: m.phases === undefined ? 0 : Object.keys(m.phases).length, ...(m.counts ?? {}) };
    return { loop, sessionKind: typeof m.session_kind === 'string' ? m.session_kind : null };
  } catch {
    return { loop: null, sessionKind: null };
  }
}

/**
 * Writes the receipt (each file atomically, ship-run.json last: it is the record a reader
 * takes as the receipt) after checking that the branch's tip is the head it binds;
 * returns the event its lines print. QUEUE_RECEIPT_STALE when the tip is another commit
 * (something moved the branch after the lane's last turn).
 */
export async function writeShipReceipt(facts: ReceiptFacts): Promise<ReceiptEvent> {
  const tip = await branchTip(facts.repo, facts.branch);
  const path = join(facts.runDir, SHIP_RUN_FILE);
  if (tip !== facts.head) throw stale(facts.branch, facts.head, tip, path);
  // The head's tree must be the one the pregate passed at: a receipt never vouches for checks run on other code.
  if (facts.tree !== null) {
    const tree = await git(['rev-parse', '--verify', '--quiet', '--end-of-options', `${facts.head}^{tree}`], { cwd: facts.repo });
    if (tree.status !== 0 || tree.stdout.trim() !== facts.tree) throw new LanewardError('QUEUE_RECEIPT_STALE', `the pregate passed at tree ${facts.tree.slice(0, 12)}, but ${facts.head.slice(0, 12)} has tree ${tree.stdout.trim().slice(0, 12) || '(none)'}`, { path });
  }
  const review = reviewFacts(facts.runDir);
  // A crew's lanes run unattended unless their review run recorded otherwise.
  const sessionKind = review.sessionKind ?? 'unattended';
  const event: ReceiptEvent = { kind: 'receipt', lane: facts.lane, head: facts.head, base: facts.base, branch: facts.branch, tree: facts.tree, spendUsd: facts.spendUsd, sessionKind, run: facts.runDir };
  const record = {
    schema_version: 1,
    head: facts.head,
    base: facts.base,
    ...(facts.tree === null ? {} : { gated_tree: facts.tree }),
    spend_usd: Number(facts.spendUsd.toFixed(6)),
    session_kind: sessionKind,
    run: facts.runDir,
    crew: facts.crew,
    crew_run: facts.crewRun,
    lane: facts.lane,
    repo: facts.repo,
    branch: facts.branch,
    review_loop: review.loop,
    pregate: facts.tree === null ? null : 'pregate.json',
    receipt: SHIP_RECEIPT_FILE,
    receipt_source: 'laneward crew run',
  };
  const parsed = v.safeParse(shipReceiptSchema, record);
  if (!parsed.success) throw new LanewardError('INTERNAL', `ship-run.json of lane ${facts.lane} does not match the ship-receipt schema: ${parsed.issues[0].message}`, { path });
  const block = ['<!-- laneward ship receipt -->', shipReceiptLine(event), `crew=${facts.crew} crew_run=${facts.crewRun} repo=${facts.repo}`, ''].join('\n');
  writeFileAtomic(join(facts.runDir, SHIP_RECEIPT_FILE), block, 0o644, true);
  writeFileAtomic(path, `${JSON.stringify(record, null, 2)}\n`, 0o644, true);
  return event;
}

export interface ReceiptCurrency {
  readonly status: 'current' | 'stale' | 'missing';
  readonly head: string | null;
  readonly tip: string | null;
  readonly branch: string | null;
}

/**
 * Whether the receipt in `runDir` is still bound to its branch: `current` when the branch's
 * tip (in the repository the receipt names) is the receipt's head, `stale` when it is
 * another commit or the branch is gone, `missing` when the run directory holds no receipt
 * that parses against the ship-receipt schema with a repo and branch.
 */
export async function receiptCurrency(runDir: string): Promise<ReceiptCurrency> {
  const none: ReceiptCurrency = { status: 'missing', head: null, tip: null, branch: null };
  const record = readShipRun(runDir);
  if (record === null) return none;
  const { head, repo, branch } = record as { head: string; repo?: unknown; branch?: unknown };
  if (typeof repo !== 'string' || typeof branch !== 'string') return none;
  const tip = await branchTip(repo, branch).catch(() => null);
  return { status: tip === head ? 'current' : 'stale', head, tip, branch };
}

/** A lane's ship-run.json as it stands, checked by the `ship-receipt` schema; null when there is none that reads and parses. */
export function readShipRun(runDir: string): Record<string, unknown> | null {
  const read = tryReadBounded(join(runDir, SHIP_RUN_FILE), 1024 * 1024);
  if (!read.ok) return null;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(read.bytes).toString('utf8'));
  } catch {
    return null;
  }
  const parsed = v.safeParse(shipReceiptSchema, value);
  return parsed.success ? (parsed.output as Record<string, unknown>) : null;
}

/** QUEUE_RECEIPT_STALE for a receipt whose head is not its branch's tip. */
export function stale(branch: string, head: string, tip: string | null, path: string): LanewardError {
  return new LanewardError('QUEUE_RECEIPT_STALE', `the receipt binds ${head.slice(0, 12)} but ${branch} is ${tip === null ? 'gone' : `at ${tip.slice(0, 12)}`}`, { path });
}

async function branchTip(repo: string, branch: string): Promise<string> {
  const args = ['rev-parse', '--verify', '--quiet', '--end-of-options', `refs/heads/${branch}^{commit}`];
  const result = await git(args, { cwd: repo });
  if (result.status !== 0) throw new LanewardError('WORKSPACE_FAILED', `reading the tip of ${branch} in ${repo}: ${gitFailure(args, result)}`, { path: repo });
  return result.stdout.trim();
}
