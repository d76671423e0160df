import { fstatSync, readFileSync } from 'node:fs';
import { GuardStderr } from './guard-stderr.ts';

/** Where a command prints: results on stdout, errors and progress on stderr. */
export interface Io {
  out(line: string): void;
  err(line: string): void;
  /** Raw stderr writes for a progress display, guard lines or a child's output. */
  errRaw(data: string | Uint8Array): void;
  /** Raw stdout writes, for a supervised child's own output. */
  outRaw?(data: string | Uint8Array): void;
  /** A guard line on stderr, written without ever blocking (queued while stderr is full). */
  errGuard?(text: string): void;
  /**
   * Writes `text` (after any queued guard lines) to stderr within `timeoutMs`; false when
   * the write failed. When stderr stays blocked past the budget the process ends with
   * exit 2 (see processIo).
   */
  flushErr?(text: string, timeoutMs: number): Promise<boolean>;
  /** False when stderr was closed when laneward started: nothing written there is seen. */
  stderrOpen?(): boolean;
  readonly stderrIsTTY: boolean;
  /** Stderr's terminal size now (a live display fits its width); meaningful when stderrIsTTY. */
  stderrSize?(): TerminalSize;
  /** Calls `listener` each time stderr's terminal is resized; returns the unsubscribe. */
  onStderrResize?(listener: () => void): () => void;
}

export interface TerminalSize {
  readonly columns: number;
  readonly rows: number;
}

export const processIo: Io = {
  out: (line) => void process.stdout.write(`${line}\n`),
  err: (line) => void process.stderr.write(`${line}\n`),
  errRaw: (data) => void process.stderr.write(data),
  outRaw: (data) => void process.stdout.write(data),
  errGuard: (text) => guardStderr().write(text),
  flushErr: async (text, timeoutMs) => {
    // Hint: no write here can block (see GuardStderr) and none is parked on a thread-pool
    // thread, which exit() would wait for; so once the budget is spent the exit is immediate.
    const written = await guardStderr().flush(text, timeoutMs);
    if (!written) process.exit(2);
    return written;
  },
  stderrOpen: () => stderrOpenAtStart(),
  get stderrIsTTY() {
    return process.stderr.isTTY === true;
  },
  // A terminal reporting no size (0 over a serial line) is taken as the classic 80x24.
  stderrSize: () => ({ columns: process.stderr.columns || 80, rows: process.stderr.rows || 24 }),
  onStderrResize: (listener) => {
    // Node refreshes the size on SIGWINCH before it emits 'resize'.
    process.stderr.on('resize', listener);
    return () => void process.stderr.off('resize', listener);
  },
};

let guardWriter: GuardStderr | undefined;
const guardStderr = () => (guardWriter ??= new GuardStderr());

/**
 * Whether fd 2 is a real destination. Node replaces a descriptor that was closed at
 * start-up (`2>&-`) by /dev/null opened read-write before any of our code runs; a shell
 * redirection to /dev/null opens it write-only, so read-write /dev/null on fd 2 is taken
 * as "closed". Other runtimes leave it closed: fstat fails.
 */
function stderrOpenAtStart(): boolean {
  let stat;
  try {
    stat = fstatSync(2);
  } catch {
    return false;
  }
  const DEV_NULL = 0x103; // major 1, minor 3
  if (!stat.isCharacterDevice() || stat.rdev !== DEV_NULL) return true;
  try {
    const flags = /^flags:\s+([0-7]+)$/m.exec(readFileSync('/proc/self/fdinfo/2', 'latin1'))?.[1];
    return flags === undefined || (Number.parseInt(flags, 8) & 3) !== 2; // O_ACCMODE, O_RDWR
  } catch {
    return true;
  }
}
