import type { SnapshotSource } from '../../formats/console/snapshot.ts';
import { LiveRegion } from './live-region.ts';
import { regionLines } from './region-lines.ts';

/** The stderr a terminal view draws on (the CLI's Io is one). */
export interface TerminalOutput {
  errRaw(data: string): void;
  stderrSize?(): { readonly columns: number; readonly rows: number };
  onStderrResize?(listener: () => void): () => void;
}

/** A crew's live region on a terminal, redrawn from its snapshot source. */
export interface TerminalView {
  /** Prints a line above the region (`write` writes it). */
  print(write: () => void): void;
  /** Stops redrawing; the region stays as last drawn until {@link TerminalView.close}. */
  stop(): void;
  /** Stops redrawing and either leaves the source's state now on screen, as its final state, or clears the region. */
  close(final: boolean): void;
}

const FALLBACK = { columns: 80, rows: 24 };

/**
 * Draws `source`'s region on stderr now, then again every `everyMs` and whenever the
 * terminal is resized (a narrower terminal gets lines cut to its width without waiting for
 * the next tick). The caller knows stderr is a terminal.
 */
export function startTerminalView(out: TerminalOutput, source: SnapshotSource, everyMs: number): TerminalView {
  const size = () => out.stderrSize?.() ?? FALLBACK;
  const region = new LiveRegion({
    write: (data) => out.errRaw(data),
    get columns() {
      return size().columns;
    },
    get rows() {
      return size().rows;
    },
  });
  const draw = () => region.draw(regionLines(source.snapshot(), size().columns));
  draw();
  const timer = setInterval(draw, everyMs);
  const unsubscribe = out.onStderrResize?.(draw);
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    unsubscribe?.();
  };
  return {
    print: (write) => region.print(write),
    stop,
    close: (final) => {
      stop();
      if (final) draw();
      region.close(final);
    },
  };
}
