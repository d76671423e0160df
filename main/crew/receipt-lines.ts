import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { LoadedCrew } from './load-crew.ts';
import type { Store } from '../store/store.ts';
import { receiptCurrency, SHIP_RUN_FILE, type ReceiptCurrency } from './ship-receipt.ts';

/** One complete lane's receipt, checked against its branch's tip now. */
export interface LaneReceipt extends ReceiptCurrency {
  readonly lane: string;
}

/**
 * The receipts of the crew's complete lanes that wrote one (a crew with a `pregate`), in
 * file order, each `current` while its branch's tip is still its head, else `stale`
 * (QUEUE_RECEIPT_STALE to whoever would land it). Read-only: git is asked, nothing written.
 */
export async function laneReceipts(loaded: LoadedCrew, store: Store): Promise<LaneReceipt[]> {
  const found: LaneReceipt[] = [];
  for (const lane of loaded.lanes) {
    const progress = store.crewLanes.get([loaded.crew.crew, lane.id]);
    if (progress?.stage !== 'complete' || !existsSync(join(progress.runDir, SHIP_RUN_FILE))) continue;
    found.push({ lane: lane.id, ...(await receiptCurrency(progress.runDir)) });
  }
  return found;
}
