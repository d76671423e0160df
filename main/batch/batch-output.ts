/**
 * Where a batch prints: one line per run and the summary on stdout, the progress display
 * on stderr. The CLI's Io is one; a bench passes a silent one.
 */
export interface BatchOutput {
  out(line: string): void;
  /** Raw stderr writes, for the progress display. */
  errRaw(data: string | Uint8Array): void;
  /** The progress display is drawn only on a terminal. */
  readonly stderrIsTTY: boolean;
}
