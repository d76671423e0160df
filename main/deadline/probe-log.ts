import { closeSync, constants, openSync, readFileSync, writeSync } from 'node:fs';
import { errnoCode } from '../../formats/error.ts';

/** One line of the receipt log: a launch, a refusal or a finish, with its wall-clock time. */
export interface ProbeRecord {
  readonly event: 'launch' | 'refused' | 'finish';
  readonly probe: string;
  readonly at: string;
  readonly [extra: string]: unknown;
}

/** The receipt log sits beside the receipt: `<FILE>.log`, one JSON line per record. */
export function probeLogPath(receiptFile: string): string {
  return `${receiptFile}.log`;
}

/**
 * Appends one record with a single O_APPEND write, so concurrent guards never interleave
 * inside a line. Never follows a symlink.
 */
export function appendProbeRecord(log: string, record: ProbeRecord): void {
  const fd = openSync(log, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
  try {
    writeSync(fd, `${JSON.stringify(record)}\n`);
  } finally {
    closeSync(fd);
  }
}

export function readProbeRecords(log: string): ProbeRecord[] {
  let text: string;
  try {
    text = readFileSync(log, 'utf8');
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return [];
    throw error;
  }
  const records: ProbeRecord[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    try {
      records.push(JSON.parse(line) as ProbeRecord);
    } catch {
      // A torn last line from a guard killed mid-write carries no launch.
    }
  }
  return records;
}

/**
 * Claims a probe slot race-free: the launch record is appended first, then the position
 * of our own record among all launches decides. Two guards racing for the last slot
 * cannot both win, since their records are ordered in the file.
 */
export function claimProbe(log: string, probe: string, maxProbes: number | undefined, at: string): { granted: boolean; index: number } {
  appendProbeRecord(log, { event: 'launch', probe, at });
  const launches = readProbeRecords(log).filter((record) => record.event === 'launch');
  const index = launches.findIndex((record) => record.probe === probe) + 1;
  const granted = maxProbes === undefined || index <= maxProbes;
  if (!granted) appendProbeRecord(log, { event: 'refused', probe, at });
  return { granted, index };
}
