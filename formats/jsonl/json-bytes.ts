/**
 * A scanner of JSON on its bytes, for one line at a time: whitespace, strings, numbers,
 * words and any value, each answering the index after what it read, or -1 when it is not
 * certainly well-formed. row-bytes.ts extends it with a row's schema; a subclass sets `b`
 * and `end` for the line before scanning.
 */

export const QUOTE = 0x22;
/** Bytes that stand for themselves inside a JSON string: printable ASCII but `"` and `\\`. */
const PLAIN = new Uint8Array(256);
for (let c = 0x20; c < 0x80; c++) if (c !== 0x22 && c !== 0x5c) PLAIN[c] = 1;
const BACKSLASH = 0x5c;
export const MAX_DEPTH = 64;

export const TRUE = [0x74, 0x72, 0x75, 0x65];
export const FALSE = [0x66, 0x61, 0x6c, 0x73, 0x65];
export const NULL = [0x6e, 0x75, 0x6c, 0x6c];

export function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

export class JsonBytes {
  protected b: Uint8Array = new Uint8Array(0);
  protected end = 0;
  // Set by str(): whether the string just scanned held a backslash.
  protected escaped = false;

  /** The index of the first byte at or after `i` that is not JSON whitespace (a newline ends a line, so it is not skipped). */
  protected ws(i: number): number {
    const b = this.b;
    let c = b[i];
    while (c === 0x20 || c === 0x09 || c === 0x0d) c = b[++i];
    return i;
  }

  /** A string at `i` (its opening quote): the index after its closing quote, or -1. */
  protected str(i: number): number {
    const b = this.b;
    this.escaped = false;
    i += 1;
    for (;;) {
      // Hint: one table load per byte; the line's newline (a control byte) stops the loop.
      let c = b[i]!;
      while (PLAIN[c] === 1) c = b[++i]!;
      if (c === QUOTE) return i + 1;
      if (c !== BACKSLASH) return -1;
      this.escaped = true;
      const e = b[i + 1]!;
      if (e === 0x75) {
        for (let k = 2; k < 6; k++) if (!isHex(b[i + k]!)) return -1;
        i += 6;
        continue;
      }
      if (e !== QUOTE && e !== BACKSLASH && e !== 0x2f && e !== 0x62 && e !== 0x66 && e !== 0x6e && e !== 0x72 && e !== 0x74) return -1;
      i += 2;
    }
  }

  /** A JSON number at `i`, full grammar: the index after it, or -1. */
  protected num(i: number): number {
    const b = this.b;
    if (b[i] === 0x2d) i++;
    let c = b[i]!;
    if (c === 0x30) i++;
    else if (c >= 0x31 && c <= 0x39) {
      do i++;
      while ((c = b[i]!) >= 0x30 && c <= 0x39);
    } else return -1;
    if (b[i] === 0x2e) {
      i++;
      if (!isDigit(b[i]!)) return -1;
      do i++;
      while (isDigit(b[i]!));
    }
    c = b[i]!;
    if (c === 0x65 || c === 0x45) {
      i++;
      c = b[i]!;
      if (c === 0x2b || c === 0x2d) i++;
      if (!isDigit(b[i]!)) return -1;
      do i++;
      while (isDigit(b[i]!));
    }
    return i > this.end ? -1 : i;
  }

  protected word(i: number, word: readonly number[]): number {
    const b = this.b;
    if (i + word.length > this.end) return -1;
    for (let k = 0; k < word.length; k++) if (b[i + k] !== word[k]) return -1;
    return i + word.length;
  }

  /** Any JSON value at `i`: the index after it, or -1. */
  protected any(i: number, depth: number): number {
    if (i >= this.end) return -1;
    const b = this.b;
    const c = b[i];
    if (c === QUOTE) return this.str(i);
    if (c === 0x74) return this.word(i, TRUE);
    if (c === 0x66) return this.word(i, FALSE);
    if (c === 0x6e) return this.word(i, NULL);
    if (c === 0x7b || c === 0x5b) {
      if (depth >= MAX_DEPTH) return -1;
      const close = c === 0x7b ? 0x7d : 0x5d;
      i = this.ws(i + 1);
      if (i < this.end && b[i] === close) return i + 1;
      for (;;) {
        if (c === 0x7b) {
          if (i >= this.end || b[i] !== QUOTE) return -1;
          i = this.str(i);
          if (i < 0) return -1;
          i = this.ws(i);
          if (i >= this.end || b[i] !== 0x3a) return -1;
          i = this.ws(i + 1);
        }
        i = this.any(i, depth + 1);
        if (i < 0) return -1;
        i = this.ws(i);
        if (i >= this.end) return -1;
        if (b[i] === 0x2c) {
          i = this.ws(i + 1);
          continue;
        }
        return b[i] === close ? i + 1 : -1;
      }
    }
    return this.num(i);
  }
}
