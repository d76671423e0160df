import { bounded } from '../../formats/text/bounded.ts';
import { oneLine } from '../../formats/text/one-line.ts';

/** The bytes of a call's stderr kept: enough for its last lines, never the whole of a chatty CLI. */
export const STDERR_TAIL_BYTES = 4096;
/** The lines of a call's stderr its record keeps. */
export const STDERR_TAIL_LINES = 5;
/** The characters of one kept line (a JSON blob on one line is cut, with its length said). */
export const STDERR_LINE_MAX = 400;

/**
 * The end of a supervised call's stderr, kept as it is written, in a bounded window: a
 * child that failed says why there (`fatal: OPENAI_API_KEY is not set`), and its exit
 * status alone says nothing a user can act on.
 */
export class StderrTail {
  private window = Buffer.alloc(0);
  /** Whether bytes before the window were dropped: its first line may be the end of a longer one. */
  private cut = false;

  push(chunk: Buffer): void {
    const tail = chunk.length > STDERR_TAIL_BYTES ? chunk.subarray(chunk.length - STDERR_TAIL_BYTES) : chunk;
    const joined = Buffer.concat([this.window, tail]);
    if (tail !== chunk || joined.length > STDERR_TAIL_BYTES) this.cut = true;
    // Copied out: the window never holds a reader's scratch buffer.
    this.window = joined.length > STDERR_TAIL_BYTES ? Buffer.from(joined.subarray(joined.length - STDERR_TAIL_BYTES)) : joined;
  }

  /** The last non-blank lines, oldest first, each escaped (one line, nothing that reorders it) and bounded. */
  lines(): string[] {
    return stderrLines(this.window, this.cut);
  }
}

/** The last non-blank lines of `bytes` (a stderr's end), escaped and bounded; `cut`: its first line may be partial and is dropped. */
export function stderrLines(bytes: Uint8Array, cut: boolean): string[] {
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  const all = text.split('\n');
  // A window that starts mid-line (bytes before it dropped) has half a line first: it is not one of the last lines.
  if (cut && all.length > 1) all.shift();
  const kept = all.map((line) => line.replace(/\r$/, '')).filter((line) => line.trim() !== '');
  return kept.slice(-STDERR_TAIL_LINES).map((line) => bounded(oneLine(line), STDERR_LINE_MAX));
}
