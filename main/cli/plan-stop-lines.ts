import type { RunStop } from '../plan/run-types.ts';

/** What stopped a plan run, in words: the phase and the voice that failed, with its code. */
export function stopSummary(stop: RunStop): string {
  if (stop.reason === 'nothing_to_move') return `phase ${stop.phase ?? '-'} has no attempt plan run can move`;
  return `phase ${stop.phase} native voice ${stop.state} (${stop.code ?? 'unknown'})`;
}

/** The argv that moves a stopped run on, run before `plan run` again; null when none does. */
export function stopFixArgv(stop: RunStop): readonly string[] | null {
  return stop.reason === 'native_failed' ? ['plan', 'next', '--redispatch', stop.attempt] : null;
}

/** The STOPPED line's text (and --json's `stopped`): the summary, then what to run. */
export function stopWords(stop: RunStop): string {
  const fix = stopFixArgv(stop);
  return fix === null ? stopSummary(stop) : `${stopSummary(stop)}; run ${fix.join(' ')}, then plan run again`;
}
