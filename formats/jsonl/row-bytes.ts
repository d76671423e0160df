import { FALSE, isDigit, JsonBytes, MAX_DEPTH, NULL, QUOTE, TRUE } from './json-bytes.ts';
import { Kind, plainBytes, type Entry, type RowShape, type Value } from './row-shape.ts';

/**
 * A JSONL row checked on its bytes, before any UTF-8 decode or JSON.parse: the validator's
 * hot path for the bulk of an archive (findings). It answers only "this line is certainly
 * a valid row, bound to the run, and this is its id" or "not sure"; "not sure" sends the
 * line down the ordinary path (decode, JSON.parse, compiled check, valibot), which words
 * every issue. So a line is accepted here only when that path would find nothing: it is
 * plain ASCII, a JSON object whose schema keys each appear once and whose values match
 * their schema without needing decoding (no escapes where a value is compared), `run` is
 * the run id and `id` a string starting with `<run>-`. Everything else, however valid,
 * is left to the ordinary path.
 */

/**
 * Checks lines of one file against one shape, bound to one run. After `accept` returns
 * true, `idStart`/`idEnd` are the byte range of the row's id (ASCII, no escapes).
 */
export class RowBytesCheck extends JsonBytes {
  idStart = 0;
  idEnd = 0;
  private readonly shape: RowShape;
  private readonly runBytes: Uint8Array | undefined;
  // Hint: rows of one file share their key order, so the key that followed each key last
  // time (index shape.entries.length: the first key) is tried first, byte for byte.
  private readonly following: (Entry | undefined)[];

  constructor(shape: RowShape, runId: string | undefined) {
    super();
    this.shape = shape;
    this.following = new Array<Entry | undefined>(shape.entries.length + 1).fill(undefined);
    let runBytes: Uint8Array | undefined;
    if (runId !== undefined) {
      try {
        runBytes = plainBytes(runId);
      } catch {
        runBytes = undefined;
      }
    }
    // A run id that is not plain ASCII: never sure, every line takes the ordinary path.
    this.runBytes = runId !== undefined && runBytes === undefined ? new Uint8Array([0x80]) : runBytes;
  }

  /**
   * Whether the line `b[start, end)` (no newline in it) is certainly a valid, bound row.
   * `b[end]` must be the line's newline or past the buffer: the scan stops on it (a control
   * character) instead of checking every index against `end`.
   */
  accept(b: Uint8Array, start: number, end: number): boolean {
    if (end < b.length && b[end] !== 0x0a) return false;
    this.b = b;
    this.end = end;
    const shape = this.shape;
    let i = this.ws(start);
    if (b[i] !== 0x7b) return false;
    i = this.ws(i + 1);
    let seen = 0;
    // The entry of the key before (the first key: entries.length; after an unknown key: -1).
    let after = shape.entries.length;
    let runStart = -1;
    let runEnd = -1;
    let idStart = -1;
    let idEnd = -1;
    if (b[i] === 0x7d) {
      i += 1;
    } else {
      for (;;) {
        if (b[i] !== QUOTE) return false;
        const keyStart = i + 1;
        // A key equal to the expected one: its bytes, then the closing quote (no escape can hide there).
        let entry = after === -1 ? undefined : this.following[after];
        let keyEnd: number;
        if (entry !== undefined && this.startsWith(entry.key, keyStart) && b[keyStart + entry.key.length] === QUOTE) {
          keyEnd = keyStart + entry.key.length + 1;
        } else {
          keyEnd = this.str(i);
          if (keyEnd < 0 || this.escaped) return false;
          entry = this.match(keyStart, keyEnd - 1);
          if (after !== -1) this.following[after] = entry;
        }
        after = entry === undefined ? -1 : entry.index;
        i = this.ws(keyEnd);
        if (b[i] !== 0x3a) return false;
        i = this.ws(i + 1);
        const valueStart = i;
        if (entry === undefined) {
          i = this.any(i, 0);
        } else {
          if ((seen & entry.bit) !== 0) return false; // a repeated key: JSON.parse keeps the last one
          seen |= entry.bit;
          // Hint: most values are plain strings; they skip value()'s dispatch.
          const value = entry.value;
          i = value.kind === Kind.String && b[i] === QUOTE ? this.str(i) : this.value(value, i, 0);
          if (i < 0) return false;
          if (entry === shape.run) {
            if (this.escaped) return false;
            runStart = valueStart + 1;
            runEnd = i - 1;
          } else if (entry === shape.id) {
            if (this.escaped) return false;
            idStart = valueStart + 1;
            idEnd = i - 1;
          }
        }
        if (i < 0) return false;
        i = this.ws(i);
        const c = b[i];
        if (c === 0x2c) {
          i = this.ws(i + 1);
          continue;
        }
        if (c !== 0x7d) return false;
        i += 1;
        break;
      }
    }
    if (this.ws(i) !== end) return false;
    if ((seen & shape.requiredMask) !== shape.requiredMask) return false;
    if (idStart < 0) return false;
    const runBytes = this.runBytes;
    if (runBytes !== undefined) {
      // run === runId and id starts with `${runId}-`, compared without escapes (str() refused them).
      const n = runBytes.length;
      if (runStart < 0 || runEnd - runStart !== n || idEnd - idStart < n + 1) return false;
      for (let k = 0; k < n; k++) {
        const c = runBytes[k];
        if (b[runStart + k] !== c || b[idStart + k] !== c) return false;
      }
      if (b[idStart + n] !== 0x2d) return false;
    }
    this.idStart = idStart;
    this.idEnd = idEnd;
    return true;
  }


  private startsWith(key: Uint8Array, at: number): boolean {
    const b = this.b;
    for (let k = 0; k < key.length; k++) if (b[at + k] !== key[k]) return false;
    return true;
  }

  private match(start: number, end: number): Entry | undefined {
    const list = this.shape.byLength[end - start];
    if (list === undefined) return undefined;
    const b = this.b;
    outer: for (const entry of list) {
      const key = entry.key;
      for (let k = 0; k < key.length; k++) if (b[start + k] !== key[k]) continue outer;
      return entry;
    }
    return undefined;
  }

  /** A value matching `value` at `i`: the index after it, or -1 (not sure). */
  private value(value: Value, i: number, depth: number): number {
    if (i >= this.end) return -1;
    const b = this.b;
    const c = b[i];
    if (value.nullable && c === 0x6e) return this.word(i, NULL);
    switch (value.kind) {
      case Kind.Any:
        return this.any(i, depth);
      case Kind.String:
        return c === QUOTE ? this.str(i) : -1;
      case Kind.Boolean:
        return c === 0x74 ? this.word(i, TRUE) : c === 0x66 ? this.word(i, FALSE) : -1;
      case Kind.Number: {
        if (!value.int) return this.num(i);
        // Only -?[0-9]{1,15} without a fraction or exponent: a safe integer for sure.
        let k = i;
        const negative = b[k] === 0x2d;
        if (negative) k++;
        const digits = k;
        let n = 0;
        while (k < this.end && isDigit(b[k]!)) {
          n = n * 10 + (b[k]! - 0x30);
          k++;
        }
        const count = k - digits;
        if (count === 0 || count > 15 || (count > 1 && b[digits] === 0x30)) return -1;
        const next = b[k];
        if (next === 0x2e || next === 0x65 || next === 0x45) return -1;
        if (value.min !== undefined && !((negative ? -n : n) >= value.min)) return -1;
        return k;
      }
      case Kind.Literal:
      case Kind.Picklist: {
        let start = i;
        let stop: number;
        if (value.numeric) {
          stop = this.num(i);
        } else {
          if (c !== QUOTE) return -1;
          stop = this.str(i);
          if (stop < 0 || this.escaped) return -1;
          start = i + 1;
        }
        if (stop < 0) return -1;
        const last = value.numeric ? stop : stop - 1;
        outer: for (const option of value.options) {
          if (option.length !== last - start) continue;
          for (let k = 0; k < option.length; k++) if (b[start + k] !== option[k]) continue outer;
          return stop;
        }
        return -1;
      }
      case Kind.Array: {
        if (c !== 0x5b || depth >= MAX_DEPTH) return -1;
        const item = value.item!;
        i = this.ws(i + 1);
        if (i < this.end && b[i] === 0x5d) return i + 1;
        for (;;) {
          i = this.value(item, i, depth + 1);
          if (i < 0) return -1;
          i = this.ws(i);
          if (i >= this.end) return -1;
          if (b[i] === 0x2c) {
            i = this.ws(i + 1);
            continue;
          }
          return b[i] === 0x5d ? i + 1 : -1;
        }
      }
    }
    return -1;
  }
}
