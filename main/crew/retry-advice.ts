/** A word as a shell reads it back as that one word: quoted only when it needs to be. */
export function shellWord(w: string): string {
  return /^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replaceAll("'", `'\\''`)}'`;
}

/** The command that runs a crew's failed lanes again, runnable as printed. */
export function retryAdvice(file: string, root: string, extra: readonly string[] = []): string {
  return [`laneward crew run ${shellWord(file)} --retry-failed --state ${shellWord(root)}`, ...extra.map(shellWord)].join(' ');
}

/**
 * The command that continues a crew's unfinished lanes (interrupted, or in flight when its
 * process was killed) where each stopped, runnable as printed: the crew run itself, started
 * again on the same state root.
 */
export function resumeAdvice(file: string, root: string, extra: readonly string[] = []): string {
  return [`laneward crew run ${shellWord(file)} --state ${shellWord(root)}`, ...extra.map(shellWord)].join(' ');
}
