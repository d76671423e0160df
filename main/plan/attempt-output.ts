import { join } from 'node:path';
import type { SupervisionSpec } from '../../workers/supervise/spec.ts';
import { makeDirs } from '../fs/make-dirs.ts';

/** The directory of a run's attempts' output files, inside the run directory. */
const STREAMS = 'streams';

/** The files one attempt's provider writes its stdout and stderr to, in the run directory. */
export function attemptOutput(runDir: string, attemptId: string): { readonly stdout: string; readonly stderr: string } {
  return { stdout: join(runDir, STREAMS, `${attemptId}.stdout`), stderr: join(runDir, STREAMS, `${attemptId}.stderr`) };
}

/**
 * `spec` with the attempt's provider writing its output to the attempt's files (made
 * here) rather than through pipes: what it streams outlives a driver that dies, and a
 * later driver adopts it by following them ({@link orphanPlan}).
 */
export function withAttemptOutput(spec: SupervisionSpec, runDir: string, attemptId: string): SupervisionSpec {
  if (spec.stdio !== 'pipe') return spec;
  const files = attemptOutput(runDir, attemptId);
  makeDirs(join(runDir, STREAMS));
  return { ...spec, stdoutFile: files.stdout, stderrFile: files.stderr };
}
