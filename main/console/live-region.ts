import { fit } from './region-lines.ts';

export { regionLines } from './region-lines.ts';

/** The terminal a region is drawn on: stderr, or a fake one in tests. */
export interface RegionTerminal {
  write(data: string): void;
  /** Its width now; read at every draw, since the terminal may be resized at any time. */
  readonly columns: number;
  /** Its height now, when known: a region taller than the screen could not be found again. */
  readonly rows?: number;
}

/** Erases the cursor's row (EL 2): the cursor stays where it is. */
const CLEAR_ROW = '\x1b[2K';
/** Moves up one row, in the same column. */
const UP = '\x1b[1A';

/**
 * A block of lines at the bottom of a terminal, redrawn in place: the cursor goes back up
 * to the block's first row, clearing each row on its way, and the new lines are written,
 * each ending in a newline (so the cursor rests at the start of the row under the block).
 * Lines other writers print go through {@link LiveRegion.print}, which clears the block,
 * lets the line be written where the block was and draws the block again under it: the
 * scrollback then holds those lines only, never a stale copy of the block.
 *
 * Every line is cut to the width minus one column, so no row wraps at draw time; a
 * terminal made narrower since may have rewrapped the block, so the rows to go back up are
 * counted at the width of the moment the cursor moves.
 */
export class LiveRegion {
  /** The lines on screen now, as written. */
  private shown: string[] = [];
  private shownAt = -1;
  private closed = false;

  constructor(private readonly terminal: RegionTerminal) {}

  /** Draws `lines` in place of the region; nothing is written when neither they nor the width changed. */
  draw(lines: readonly string[]): void {
    if (this.closed) return;
    const columns = this.terminal.columns;
    const rows = this.terminal.rows;
    // Hint: one row is kept free, so the block's top row never scrolls off the screen.
    const kept = rows === undefined ? lines : lines.slice(0, Math.max(1, rows - 1));
    const next = kept.map((line) => fit(line, columns - 1));
    if (columns === this.shownAt && same(next, this.shown)) return;
    this.terminal.write(`${this.erase()}${next.map((line) => `${line}\n`).join('')}`);
    this.shown = next;
    this.shownAt = columns;
  }

  /** Prints a line above the region: `write` writes it (to stdout or stderr) where the region was. */
  print(write: () => void): void {
    if (this.closed || this.shown.length === 0) {
      write();
      return;
    }
    const lines = this.shown;
    this.terminal.write(this.erase());
    this.shown = [];
    write();
    this.draw(lines);
  }

  /**
   * Ends the region: `keep` leaves the lines last drawn on screen (draw the final state
   * first), else they are cleared. Later prints are written as they come.
   */
  close(keep: boolean): void {
    if (this.closed) return;
    if (!keep && this.shown.length > 0) this.terminal.write(this.erase());
    this.shown = [];
    this.closed = true;
  }

  /**
   * Moves the cursor to the region's first row, clearing the row it rests on and every row
   * of the region, bottom up. Never a clear to the end of the screen (ED): from a pane's top
   * row, tmux takes that for a whole-screen clear and (its default scroll-on-clear) pushes
   * the screen into its history, so every redraw left a copy of the region there.
   */
  private erase(): string {
    const columns = Math.max(1, this.terminal.columns);
    const up = this.shown.reduce((sum, line) => sum + Math.max(1, Math.ceil([...line].length / columns)), 0);
    return `\r${CLEAR_ROW}${`${UP}${CLEAR_ROW}`.repeat(up)}`;
  }
}

function same(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((line, i) => line === b[i]);
}
