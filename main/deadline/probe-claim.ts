import { LanewardError } from '../../formats/codes/error.ts';
import { appendProbeRecord, readProbeRecords, type ProbeRecord } from './probe-log.ts';
import type { ReceiptIdentity } from './receipt-file.ts';

export interface ProbeClaim {
  readonly granted: boolean;
  /** This launch's position among all launches of the receipt, from 1. */
  readonly index: number;
}

/**
 * Claims a probe slot race-free: the launch record (with the receipt's identity) is
 * appended first, then the position of our own record among all launches decides. Two
 * guards racing for the last slot cannot both win, since their records are ordered in
 * the file. It fails closed: a guard that cannot read its own record back refuses
 * (PROBE_LOG_INVALID), and a receipt that is not the file the first launch saw (another
 * inode, or changed since) is RECEIPT_INVALID.
 */
export function claimProbe(log: string, probe: string, maxProbes: number | undefined, identity: ReceiptIdentity, at: string): ProbeClaim {
  appendProbeRecord(log, { event: 'launch', probe, at, receipt: identity });
  const launches = readProbeRecords(log).filter((record) => record.event === 'launch');
  checkIdentity(launches, identity, log);
  const index = launches.findIndex((record) => record.probe === probe) + 1;
  if (index === 0) throw new LanewardError('PROBE_LOG_INVALID', `${log} does not hold this launch's record; the probe count cannot be proven`, { path: log });
  const granted = maxProbes === undefined || index <= maxProbes;
  if (!granted) appendProbeRecord(log, { event: 'refused', probe, at });
  return { granted, index };
}

/** Launches counted so far, for `status` (which checks the receipt identity too). */
export function launchesSoFar(log: string, identity: ReceiptIdentity): number {
  const launches = readProbeRecords(log).filter((record) => record.event === 'launch');
  checkIdentity(launches, identity, log);
  return launches.length;
}

/** The receipt must be the very file (device, inode, change time) the first launch recorded. */
function checkIdentity(launches: readonly ProbeRecord[], identity: ReceiptIdentity, log: string): void {
  const first = launches.find((record) => typeof record['receipt'] === 'object' && record['receipt'] !== null)?.['receipt'] as Partial<ReceiptIdentity> | undefined;
  if (first === undefined) return;
  if (first.dev !== identity.dev || first.ino !== identity.ino || first.ctimeMs !== identity.ctimeMs) {
    throw new LanewardError('RECEIPT_INVALID', `the receipt is not the file its first launch recorded in ${log} (replaced or changed since)`, { path: log });
  }
}
