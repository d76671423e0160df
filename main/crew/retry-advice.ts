/** A word as a shell reads it back as that one word: quoted only when it needs to be. */
export function shellWord(w: string): string {
  return /^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replaceAll("'", `'\\''`)}'`;
}

/** The command that runs a crew's failed lanes again, runnable as printed. */
export function retryAdvice(file: string, root: string): string {
  return `laneward crew run ${shellWord(file)} --retry-failed --state ${shellWord(root)}`;
}
