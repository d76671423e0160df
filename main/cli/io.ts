/** Where a command prints: results on stdout, errors and progress on stderr. */
export interface Io {
  out(line: string): void;
  err(line: string): void;
  /** Raw stderr writes for a progress display (no newline added). */
  errRaw(text: string): void;
  readonly stderrIsTTY: boolean;
}

export const processIo: Io = {
  out: (line) => void process.stdout.write(`${line}\n`),
  err: (line) => void process.stderr.write(`${line}\n`),
  errRaw: (text) => void process.stderr.write(text),
  get stderrIsTTY() {
    return process.stderr.isTTY === true;
  },
};
