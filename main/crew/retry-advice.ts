/** The command that runs a crew's failed lanes again, runnable as printed (words a shell would split are quoted). */
export function retryAdvice(file: string, root: string): string {
  const word = (w: string) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replaceAll("'", `'\\''`)}'`);
  return `laneward crew run ${word(file)} --retry-failed --state ${word(root)}`;
}
