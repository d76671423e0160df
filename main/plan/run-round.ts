import type { AttemptRecord, RunRecord } from '../../formats/review/run-record.ts';
import type { RunStop } from './run-types.ts';

/** One round of a plan run: the open attempts of the open phase to run, or why it stops. */
export type Round = { readonly open: readonly AttemptRecord[]; readonly key: string } | { readonly stop: RunStop };

/**
 * The attempts a round runs: every open attempt of the current phase. A round that would
 * run the very attempts the last one ran (`seen`, their ids), or none, stops the run: it
 * cannot move on by itself.
 */
export function roundOf(record: Pick<RunRecord, 'attempts' | 'current'>, seen: string): Round {
  const open = Object.values(record.attempts).filter((a) => a.state === 'open' && a.phase === record.current);
  const key = open.map((a) => a.id).join(',');
  if (open.length === 0 || key === seen) return { stop: stopOf(record) };
  return { open, key };
}

/** Why a run whose round has nothing to move stops: its native voice failed, or nothing can move. */
export function stopOf(record: Pick<RunRecord, 'attempts' | 'current'>): RunStop {
  const failed = Object.values(record.attempts).find((a) => a.phase === record.current && a.voice === 'native' && (a.state === 'failed' || a.state === 'unavailable'));
  if (failed === undefined) return { reason: 'nothing_to_move', phase: record.current ?? null };
  return { reason: 'native_failed', phase: failed.phase, attempt: failed.id, state: failed.state as 'failed' | 'unavailable', code: failed.code ?? null };
}
