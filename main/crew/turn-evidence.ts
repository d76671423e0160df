import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import type { TurnCall } from '../../formats/crew/record.ts';
import type { Outcome } from '../../workers/supervise/outcome.ts';
import { STDERR_TAIL_BYTES, stderrLines } from '../../workers/supervise/stderr-tail.ts';

/**
 * Agent turn `n`'s call as it ended, with its evidence: the exit status or signal, the end
 * of its stderr (what its supervisor read, else the end of the turn's stderr file, which
 * the agent writes itself), how long it ran, its marks, cost and session.
 */
export function turnCallOf(n: number, outcome: Outcome, stderrFile: string, cost: { readonly usd: number | null; readonly session: string | null }): TurnCall {
  const stderr = outcome.stderrTail.length > 0 ? [...outcome.stderrTail] : fileTail(stderrFile);
  return {
    call: `turn:${n}`,
    turn: n,
    code: outcome.code,
    exitCode: outcome.childExitCode,
    signal: outcome.signal,
    stderr,
    durationMs: Math.round(outcome.durationMs),
    marks: outcome.marks,
    usd: cost.usd,
    session: cost.session,
  };
}

/** The last lines of a stderr file of the run directory; none when it is missing, not a regular file, or unreadable. */
function fileTail(file: string): string[] {
  let fd: number;
  try {
    // Never followed: a link put where the file was names nothing of the run directory.
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return [];
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return [];
    const length = Math.min(stat.size, STDERR_TAIL_BYTES);
    const bytes = Buffer.alloc(length);
    const got = readSync(fd, bytes, 0, length, stat.size - length);
    return stderrLines(bytes.subarray(0, got), stat.size > length);
  } catch {
    return [];
  } finally {
    closeSync(fd);
  }
}
