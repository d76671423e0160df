import type { RunDriver, RunRecord } from '../../../formats/review/run-record.ts';

/**
 * Claims the run for one `plan run`: returns the live holder when another driver has it
 * (nothing changes), else makes `mine` the driver. A dead holder (killed, crashed, its pid
 * reused) holds nothing. `alive` is asked about the holder only.
 */
export function claim(review: RunRecord, input: { readonly mine: RunDriver; readonly alive: (driver: RunDriver) => boolean }): RunDriver | undefined {
  const holder = review.driver;
  if (holder !== undefined && input.alive(holder)) return holder;
  review.driver = input.mine;
  return undefined;
}

/** Gives the claim back; false (no change) once another driver took it over. */
export function unclaim(review: RunRecord, input: { readonly token: string }): boolean {
  if (review.driver?.token !== input.token) return false;
  delete review.driver;
  return true;
}
