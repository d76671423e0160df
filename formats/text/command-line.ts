/** A word as a shell reads it back as that one word: quoted only when it needs to be. */
export function shellWord(w: string): string {
  return /^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replaceAll("'", `'\\''`)}'`;
}

/** An argv as one line a shell runs as that very argv (no word is ever evaluated). */
export function commandLine(argv: readonly string[]): string {
  return argv.map(shellWord).join(' ');
}
