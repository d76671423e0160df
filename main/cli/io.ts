import { write } from 'node:fs';

/** Where a command prints: results on stdout, errors and progress on stderr. */
export interface Io {
  out(line: string): void;
  err(line: string): void;
  /** Raw stderr writes for a progress display, guard lines or a child's output. */
  errRaw(data: string | Uint8Array): void;
  /** Raw stdout writes, for a supervised child's own output. */
  outRaw?(data: string | Uint8Array): void;
  /**
   * Writes `text` to stderr within `timeoutMs`; false when the write failed. When stderr
   * stays blocked past the budget the process ends with exit 2 (see processIo).
   */
  flushErr?(text: string, timeoutMs: number): Promise<boolean>;
  readonly stderrIsTTY: boolean;
}

export const processIo: Io = {
  out: (line) => void process.stdout.write(`${line}\n`),
  err: (line) => void process.stderr.write(`${line}\n`),
  errRaw: (data) => void process.stderr.write(data),
  outRaw: (data) => void process.stdout.write(data),
  flushErr: (text, timeoutMs) =>
    new Promise((resolve) => {
      // Hint: process.stderr writes to a pipe synchronously, so a reader that stopped
      // reading would block the guard forever; fs.write blocks a pool thread instead, and
      // the timer ends the process, since that pending write would keep it alive.
      const timer = setTimeout(() => process.exit(2), timeoutMs);
      write(2, text, (error) => {
        clearTimeout(timer);
        resolve(error === null);
      });
    }),
  get stderrIsTTY() {
    return process.stderr.isTTY === true;
  },
};
