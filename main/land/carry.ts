import { join } from 'node:path';
import * as v from 'valibot';
import { LanewardError } from '../../formats/codes/error.ts';
import { carryLine } from '../../formats/crew/land-train.ts';
import { shipReceiptSchema } from '../../formats/schemas/ship-receipt.ts';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import { readShipRun, SHIP_RECEIPT_FILE, SHIP_RUN_FILE } from '../crew/ship-receipt.ts';

/** A lane's ship-run.json as it stands, schema-checked; null when there is none that parses. */
export interface ReadReceipt {
  readonly record: Record<string, unknown>;
  readonly head: string;
  readonly branch: string | null;
  /** The head the lane's own receipt was written for, when the train carried it since. */
  readonly carriedFrom: string | null;
  /** The head the last carry moved it from (`carry.from`): the branch's tip until the branch follows. */
  readonly previous: string | null;
}

export function readReceipt(runDir: string): ReadReceipt | null {
  const record = readShipRun(runDir);
  if (record === null) return null;
  const text = (key: string) => (typeof record[key] === 'string' ? (record[key] as string) : null);
  const carry = record.carry as { from?: unknown } | undefined;
  return { record, head: record.head as string, branch: text('branch'), carriedFrom: text('carried_from'), previous: typeof carry?.from === 'string' ? carry.from : null };
}

/** What the carry vouches for: the same product diff, now at `to` on `onto`. */
export interface CarryFacts {
  readonly lane: string;
  readonly runDir: string;
  readonly from: string;
  readonly to: string;
  /** The base the lane was on (its merge base with the new base) and the base it is on now. */
  readonly oldBase: string;
  readonly onto: string;
  readonly mode: 'rebase' | 'merge';
  readonly reason: string;
  readonly patchId: string;
  readonly rangeDiff: string;
  /** The tree the train's pregate passed at (the new head's); null for a crew with no checks. */
  readonly tree: string | null;
  /** Relative to the run directory: the pregate record that passed at that tree. */
  readonly pregate: string | null;
}

/**
 * Writes the carried receipt, each file atomically and ship-run.json last (the record a
 * reader takes as the receipt): head = the new tip, `carried_from` the old one,
 * `carry_reason`, and the `carry` evidence. The review loop's counters are kept: the
 * product diff they reviewed is unchanged. Written before the lane's branch moves, so a
 * train killed between the two finds a receipt whose `carried_from` is the branch's tip
 * and moves the branch on (main/land/land-lane.ts).
 */
export function writeCarriedReceipt(old: ReadReceipt, facts: CarryFacts): void {
  const path = join(facts.runDir, SHIP_RUN_FILE);
  const record = {
    ...old.record,
    head: facts.to,
    base: facts.onto,
    ...(facts.tree === null ? {} : { gated_tree: facts.tree, pregate: facts.pregate }),
    // The head the lane's receipt was written for, however many carries since: what the review read.
    carried_from: old.carriedFrom ?? facts.from,
    carry_reason: facts.reason,
    carry: {
      from: facts.from,
      to: facts.to,
      old_base: facts.oldBase,
      onto: facts.onto,
      mode: facts.mode,
      patch_id: facts.patchId,
      range_diff: facts.rangeDiff,
      receipt_source: 'laneward crew land',
    },
  };
  const parsed = v.safeParse(shipReceiptSchema, record);
  if (!parsed.success) throw new LanewardError('INTERNAL', `the carried ship-run.json of lane ${facts.lane} does not match the ship-receipt schema: ${parsed.issues[0].message}`, { path });
  const block = ['<!-- laneward ship receipt -->', carryLine({ kind: 'carry', lane: facts.lane, status: 'carried', from: facts.from, to: facts.to, reason: facts.reason }), `lane=${facts.lane} head=${facts.to} carried_from=${facts.from} onto=${facts.onto} patch_id=${facts.patchId || '-'}`, ''].join('\n');
  writeFileAtomic(join(facts.runDir, SHIP_RECEIPT_FILE), block, 0o644, true);
  writeFileAtomic(path, `${JSON.stringify(record, null, 2)}\n`, 0o644, true);
}
