/** The longest JSONL line the contract accepts: 16 MiB. */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;

const NEWLINE = 0x0a;

/** Why a line has no text: it is over the limit, or its bytes are not UTF-8. */
export const LINE_OVERLONG = 'line over 16 MiB';
export const LINE_NOT_UTF8 = 'line is not valid UTF-8';
export type LineProblem = typeof LINE_OVERLONG | typeof LINE_NOT_UTF8;

/**
 * What the splitter hands on for each line. `text` is null for a line that has none: one
 * over the limit, or one whose bytes do not decode as UTF-8 (`problem` says which).
 */
export type LineSink = (text: string | null, lineNumber: number, problem?: LineProblem) => void;

/**
 * A look at a line's bytes before it is decoded: `bytes[start, end)` (no newline). True
 * means the line is fully handled and the sink never sees it; false sends it on as text.
 * Only valid during the call.
 */
export type ByteLineSink = (bytes: Uint8Array, start: number, end: number, lineNumber: number) => boolean;

/** After this many lines the byte sink declined, with it declining most lines, it is asked no more. */
const BYTE_SINK_GIVE_UP = 256;

/**
 * Splits a byte stream into JSONL lines, numbered from 1, without holding more than one
 * line (at most `maxLineBytes`) beyond the chunk being pushed. Splitting on the byte 0x0a
 * is exact for UTF-8: it never occurs inside a multi-byte sequence, so the bytes up to a
 * chunk's last newline always decode on their own. The final newline ends the last line;
 * bytes after it form a last line without one (a "tail").
 */
export class JsonlLineSplitter {
  private readonly sink: LineSink;
  private readonly maxLineBytes: number;
  // ignoreBOM keeps a U+FEFF as text, so a BOM is malformed on any line, never dropped
  // only where a chunk happens to begin. fatal: undecodable bytes are an error, never
  // U+FFFD, so two ids differing only in invalid bytes are not the same id.
  private readonly decoder = new TextDecoder('utf-8', { ignoreBOM: true, fatal: true });
  private carry: Uint8Array[] = [];
  private carryBytes = 0;
  private overlong = false;
  private line = 0;
  private byteSink: ByteLineSink | undefined;
  private declined = 0;

  constructor(sink: LineSink, maxLineBytes = MAX_LINE_BYTES, byteSink?: ByteLineSink) {
    this.sink = sink;
    this.maxLineBytes = maxLineBytes;
    this.byteSink = byteSink;
  }

  /** Lines seen so far (after {@link end}: every line of the stream). */
  get lines(): number {
    return this.line;
  }

  /** Pushes the next chunk. The caller may reuse `chunk` once this returns. */
  push(chunk: Uint8Array): void {
    let start = 0;
    if (this.carryBytes > 0 || this.overlong) {
      const nl = chunk.indexOf(NEWLINE);
      if (nl === -1) {
        this.keep(chunk, 0, chunk.length);
        return;
      }
      this.finishCarried(chunk.subarray(0, nl));
      start = nl + 1;
    }
    const last = chunk.lastIndexOf(NEWLINE);
    if (last >= start && this.byteSink !== undefined) start = this.pushBytes(chunk, start, last);
    if (last >= start) {
      // Hint: one decode per chunk and slices of it per line; a decode per line costs more
      // than the JSON.parse that follows it. Only a chunk with undecodable bytes is
      // decoded line by line, to tell which lines they are on.
      const region = chunk.subarray(start, last);
      let text: string;
      try {
        text = this.decoder.decode(region);
      } catch {
        this.emitLineByLine(region);
        start = last + 1;
        if (start < chunk.length) this.keep(chunk, start, chunk.length);
        return;
      }
      let at = 0;
      for (;;) {
        const nl = text.indexOf('\n', at);
        this.line += 1;
        if (nl === -1) {
          this.sink(text.slice(at), this.line);
          break;
        }
        this.sink(text.slice(at, nl), this.line);
        at = nl + 1;
      }
      start = last + 1;
    }
    if (start < chunk.length) this.keep(chunk, start, chunk.length);
  }

  /**
   * Offers the whole lines of `chunk[start, last]` (`last` is a newline) to the byte sink,
   * decoding only those it declines, one by one. Returns where the lines it did not see
   * begin: past `last` unless the sink was given up on part way.
   */
  private pushBytes(chunk: Uint8Array, start: number, last: number): number {
    const byteSink = this.byteSink!;
    let at = start;
    while (at <= last) {
      const nl = chunk.indexOf(NEWLINE, at);
      this.line += 1;
      if (!byteSink(chunk, at, nl, this.line)) {
        this.emitDecoded(chunk.subarray(at, nl));
        this.declined += 1;
        // Hint: a file the sink cannot judge (not ASCII, say) goes back to one decode per chunk.
        if (this.declined > BYTE_SINK_GIVE_UP && this.declined * 2 > this.line) {
          this.byteSink = undefined;
          return nl + 1;
        }
      }
      at = nl + 1;
    }
    return at;
  }

  /** Ends the stream: a last line without a final newline is emitted as a line. */
  end(): void {
    if (this.carryBytes > 0 || this.overlong) this.finishCarried(new Uint8Array(0));
  }

  /** The lines of `region` (which ends a line) one decode each; undecodable ones have no text. */
  private emitLineByLine(region: Uint8Array): void {
    let at = 0;
    for (;;) {
      const nl = region.indexOf(NEWLINE, at);
      const end = nl === -1 ? region.length : nl;
      this.line += 1;
      this.emitDecoded(region.subarray(at, end));
      if (nl === -1) break;
      at = nl + 1;
    }
  }

  private emitDecoded(bytes: Uint8Array): void {
    let text: string;
    try {
      text = this.decoder.decode(bytes);
    } catch {
      this.sink(null, this.line, LINE_NOT_UTF8);
      return;
    }
    this.sink(text, this.line);
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
    // Copy: the caller reuses `chunk`, and Buffer#slice would only be a view of it.
    const part = new Uint8Array(size);
    part.set(chunk.subarray(start, end));
    this.carry.push(part);
    this.carryBytes += size;
  }

  /** Ends the line that started in an earlier chunk with `rest`, its bytes in this one. */
  private finishCarried(rest: Uint8Array): void {
    this.line += 1;
    const overlong = this.overlong || this.carryBytes + rest.length > this.maxLineBytes;
    const parts = this.carry;
    const size = this.carryBytes + rest.length;
    this.carry = [];
    this.carryBytes = 0;
    this.overlong = false;
    if (overlong) {
      this.sink(null, this.line, LINE_OVERLONG);
      return;
    }
    parts.push(rest);
    this.emitDecoded(concat(parts, size));
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
