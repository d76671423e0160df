import xterm from '@xterm/headless';
import type { Terminal } from '@xterm/headless';

// The package is CommonJS: under Node's ESM loader only its default export is there.
const { Terminal: HeadlessTerminal } = xterm;

/** One row of the emulator's buffer (scrollback then screen): its text and whether it continues the row above. */
export interface BufferRow {
  readonly text: string;
  readonly wrapped: boolean;
}

/**
 * A headless xterm of `columns` x `rows` keeping `scrollback` rows above the screen. A line
 * feed also returns the carriage (`convertEol`), as a terminal's line discipline does for
 * output (onlcr): bytes written straight to it read as a program's output on a tty.
 */
export function emulator(columns: number, rows: number, scrollback = 10_000) {
  const term: Terminal = new HeadlessTerminal({ cols: columns, rows, scrollback, convertEol: true, allowProposedApi: true });
  return {
    term,
    /** Resolves once the emulator has parsed `data`. */
    write: (data: string | Uint8Array) => new Promise<void>((resolve) => term.write(data, resolve)),
    /** Every row of the buffer, scrollback first, trailing blanks of each row trimmed and blank rows at the end dropped. */
    rows: (): BufferRow[] => {
      const buffer = term.buffer.active;
      const all: BufferRow[] = [];
      for (let y = 0; y < buffer.length; y++) {
        const line = buffer.getLine(y);
        if (line !== undefined) all.push({ text: line.translateToString(true), wrapped: line.isWrapped });
      }
      while (all.length > 0 && all.at(-1)!.text === '' && !all.at(-1)!.wrapped) all.pop();
      return all;
    },
    dispose: () => term.dispose(),
  };
}
