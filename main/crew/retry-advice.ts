import { commandLine } from '../../formats/text/command-line.ts';

export { shellWord } from '../../formats/text/command-line.ts';

/** The command that runs a crew's failed lanes again, as argv; `extra` (e.g. --rehearse) goes last. */
export function retryArgv(file: string, root: string, extra: readonly string[] = []): readonly string[] {
  return ['laneward', 'crew', 'run', file, '--retry-failed', '--state', root, ...extra];
}

/**
 * The command that continues a crew's unfinished lanes (interrupted, or in flight when its
 * process was killed) where each stopped, as argv: the crew run itself, started again on
 * the same state root.
 */
export function resumeArgv(file: string, root: string, extra: readonly string[] = []): readonly string[] {
  return ['laneward', 'crew', 'run', file, '--state', root, ...extra];
}

/**
 * {@link retryArgv} as the line the crew's lines and stories carry, runnable as printed.
 * Why here: the lane story (main/console/lane-story.ts) and the crew-run record still
 * carry the command as text; the crew's lines carry the argv and main/cli joins it.
 */
export function retryAdvice(file: string, root: string, extra: readonly string[] = []): string {
  return commandLine(retryArgv(file, root, extra));
}

/** {@link resumeArgv} as a line, runnable as printed (see {@link retryAdvice}). */
export function resumeAdvice(file: string, root: string, extra: readonly string[] = []): string {
  return commandLine(resumeArgv(file, root, extra));
}

/**
 * The command that answers a lane's gate for its owner, as argv (the reply in the gate
 * grammar and the owner's name are theirs to give): `--all` for every lane that waits.
 */
export function answerArgv(file: string, root: string, lane: string | null): readonly string[] {
  return ['laneward', 'crew', 'answer', file, ...(lane === null ? ['--all'] : ['--lane', lane]), '--reply', 'REPLY', '--by', 'NAME', '--state', root];
}

/** {@link answerArgv} as a line, runnable as printed once REPLY and NAME are filled in. */
export function answerAdvice(file: string, root: string, lane: string | null): string {
  return commandLine(answerArgv(file, root, lane));
}
