import { randomBytes, type KeyObject } from 'node:crypto';
import type Redis from 'ioredis';
import { LanewardError } from '../../formats/codes/error.ts';
import { crewQaLaneId } from '../../formats/crew/qa-id.ts';
import { openJob, signJob } from './signed-job.ts';

/**
 * Which job of a lane its coordinator runs now, signed by the coordinator's key: the
 * nonce of the one job it queued for the lane, and whether it already took that job's
 * result. A signed job alone proves who wrote it, not that it is wanted: anyone with
 * access to Redis can add a copy of one (under another id, or again once the original was
 * removed). A worker runs a job only when the lane's entry names its nonce and is not
 * finished, so a copy, a job of an earlier run, or one whose lane ended runs nothing.
 */
export interface LedgerEntry {
  readonly kind: 'ledger';
  readonly runAs: string;
  readonly lane: string;
  readonly nonce: string;
  readonly finished: boolean;
}

/** The Redis key of a lane's entry. */
export function ledgerKey(runAs: string, lane: string): string {
  return `laneward:ledger:${crewQaLaneId(runAs, lane)}`;
}

/** A fresh nonce for a job a coordinator queues. */
export function newNonce(): string {
  return randomBytes(16).toString('hex');
}

/** Writes the lane's entry, signed. */
export async function writeLedger(redis: Redis, entry: Omit<LedgerEntry, 'kind'>, key: KeyObject): Promise<void> {
  await redis.set(ledgerKey(entry.runAs, entry.lane), JSON.stringify(signJob({ kind: 'ledger', ...entry }, key)));
}

/** The lane's entry when a trusted key signed it for this lane; null when absent or not one. */
export async function readLedger(redis: Redis, runAs: string, lane: string, trust: KeyObject): Promise<LedgerEntry | null> {
  const text = await redis.get(ledgerKey(runAs, lane));
  if (text === null) return null;
  try {
    const entry = openJob(JSON.parse(text), trust) as Partial<LedgerEntry> | null;
    if (entry?.kind !== 'ledger' || entry.runAs !== runAs || entry.lane !== lane || typeof entry.nonce !== 'string' || typeof entry.finished !== 'boolean') return null;
    return entry as LedgerEntry;
  } catch {
    return null;
  }
}

/**
 * Refuses (JOB_INVALID) a job that is not the one its coordinator runs for the lane now:
 * no entry (its coordinator queued none, or Redis lost it and the coordinator has not
 * queued the lane again yet), another nonce (a copy of a job of an earlier run), or a
 * finished one (the lane's result was taken already).
 */
export function checkCurrent(entry: LedgerEntry | null, job: { readonly runAs: string; readonly lane: string; readonly nonce: string }): void {
  const refuse = (why: string) => new LanewardError('JOB_INVALID', `lane ${job.lane}: ${why}; it ran nothing`);
  if (entry === null) throw refuse('its coordinator names no job of this lane as current (a copy, or a job Redis lost)');
  if (entry.nonce !== job.nonce) throw refuse('its coordinator runs another job of this lane now (this one is a copy, or of an earlier run)');
  if (entry.finished) throw refuse('its coordinator already took this lane\'s result (this job is a copy)');
}
