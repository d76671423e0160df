import type { TimeoutMode } from './modes.ts';

/**
 * A supervised child as journaled at its spawn: enough for a later driver to find it
 * again after the one that started it died (pid and start time name one process; the
 * group is what a teardown signals), and to hold it to its budget.
 */
export interface ChildRecord {
  readonly pid: number;
  /** Its process group (the pid itself: every child leads its own group and session). */
  readonly pgid: number;
  /** Start time in clock ticks after boot (/proc/<pid>/stat field 22): a reused pid has another. */
  readonly ticks: number;
  /** Wall-clock time of the spawn. */
  readonly at: string;
  readonly mode: TimeoutMode;
  /**
   * When a total deadline ends it, wall clock, counted from the dispatch; null under a
   * lease, which only admitted marks move and which nobody but its supervisor can read.
   */
  readonly deadline_at: string | null;
  /** Whether its supervisor read its output or fd 3 (marks, a tool policy): an adopter cannot, unless it follows (`follows_file`). */
  readonly reads_output: boolean;
  /**
   * Its stdout (and stderr) go to files of its call that it holds itself, and everything
   * its supervisor read came from there (no fd 3): an adopter follows the same file from
   * its start and loses nothing. Absent in the records of older builds: false.
   */
  readonly follows_file?: boolean;
}

/** How a later driver settled an orphan it found; written once, with the attempt. */
export interface OrphanEnd {
  /** adopted: supervised to its end; torn_down: stopped by the later driver; gone: ended before it looked. */
  readonly how: 'adopted' | 'torn_down' | 'gone';
  /** The adoption's outcome code (null: it exited by itself), CANCELLED for a teardown. */
  readonly code: string | null;
  readonly cleanup_confirmed: boolean;
  readonly at: string;
}
