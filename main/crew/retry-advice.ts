/** A word as a shell reads it back as that one word: quoted only when it needs to be. */
export function shellWord(w: string): string {
  return /^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replaceAll("'", `'\\''`)}'`;
}

/** The command that runs a crew's failed lanes again, runnable as printed. */
export function retryAdvice(file: string, root: string): string {
  return `laneward crew run ${shellWord(file)} --retry-failed --state ${shellWord(root)}`;
}

/**
 * The command that continues a crew's unfinished lanes (interrupted, or in flight when its
 * process was killed) where each stopped, runnable as printed: the crew run itself, started
 * again on the same state root.
 */
export function resumeAdvice(file: string, root: string): string {
  return `laneward crew run ${shellWord(file)} --state ${shellWord(root)}`;
}

/**
 * The command that answers a lane's gate for its owner (the reply in the gate grammar and
 * the owner's name are theirs to give): `--all` for every lane that waits.
 */
export function answerAdvice(file: string, root: string, lane: string | null): string {
  const which = lane === null ? '--all' : `--lane ${shellWord(lane)}`;
  return `laneward crew answer ${shellWord(file)} ${which} --reply REPLY --by NAME --state ${shellWord(root)}`;
}
