/** The longest JSONL line the contract accepts: 16 MiB. */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;

const NEWLINE = 0x0a;

/** What the splitter hands on for each line. `text` is null for a line over the limit. */
export type LineSink = (text: string | null, lineNumber: number) => void;

/**
 * Splits a byte stream into JSONL lines, numbered from 1, without holding more than one
 * line (at most `maxLineBytes`) beyond the chunk being pushed. Splitting on the byte 0x0a
 * is exact for UTF-8: it never occurs inside a multi-byte sequence, so chunk boundaries
 * need no decoder state. The final newline ends the last line; bytes after it form a
 * last line without one (a "tail").
 */
export class JsonlLineSplitter {
  private readonly sink: LineSink;
  private readonly maxLineBytes: number;
  private readonly decoder = new TextDecoder();
  private carry: Uint8Array[] = [];
  private carryBytes = 0;
  private overlong = false;
  private line = 0;

  constructor(sink: LineSink, maxLineBytes = MAX_LINE_BYTES) {
    this.sink = sink;
    this.maxLineBytes = maxLineBytes;
  }

  /** Lines seen so far (after {@link end}: every line of the stream). */
  get lines(): number {
    return this.line;
  }

  /** Pushes the next chunk. The caller may reuse `chunk` once this returns. */
  push(chunk: Uint8Array): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, start);
      if (nl === -1) break;
      this.finishLine(chunk, start, nl);
      start = nl + 1;
    }
    if (start < chunk.length) this.keep(chunk, start, chunk.length);
  }

  /** Ends the stream: a last line without a final newline is emitted as a line. */
  end(): void {
    if (this.carryBytes > 0 || this.overlong) this.finishLine(new Uint8Array(0), 0, 0);
  }

  private keep(chunk: Uint8Array, start: number, end: number): void {
    if (this.overlong) return;
    const size = end - start;
    if (this.carryBytes + size > this.maxLineBytes) {
      // Hint: drop what was kept so a 200 MB line costs 16 MiB at most, never its size.
      this.overlong = true;
      this.carry = [];
      this.carryBytes = 0;
      return;
    }
    this.carry.push(chunk.slice(start, end));
    this.carryBytes += size;
  }

  private finishLine(chunk: Uint8Array, start: number, end: number): void {
    this.line += 1;
    if (!this.overlong && this.carryBytes + (end - start) > this.maxLineBytes) this.overlong = true;
    if (this.overlong) {
      this.overlong = false;
      this.carry = [];
      this.carryBytes = 0;
      this.sink(null, this.line);
      return;
    }
    let text: string;
    if (this.carryBytes === 0) {
      text = this.decoder.decode(chunk.subarray(start, end));
    } else {
      this.carry.push(chunk.subarray(start, end));
      text = this.decoder.decode(concat(this.carry, this.carryBytes + (end - start)));
      this.carry = [];
      this.carryBytes = 0;
    }
    this.sink(text, this.line);
  }
}

function concat(parts: readonly Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
