import type { AnySchema } from '../schemas/index.ts';

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

const enum Kind {
  Any, // v.unknown(): any JSON value
  String,
  Boolean,
  Number, // any JSON number; `min`/`int` narrow it
  Literal, // a string literal (bytes) or a safe non-negative integer literal (digits)
  Picklist, // string options
  Array,
}

interface Value {
  readonly kind: Kind;
  readonly nullable: boolean;
  /** Number: only -?[0-9]{1,15} (a safe integer) is accepted; anything else is "not sure". */
  readonly int: boolean;
  /** Number: the value must be >= min (only with int). */
  readonly min: number | undefined;
  /** Literal and Picklist: the accepted byte strings (a number literal as its digits). */
  readonly options: readonly Uint8Array[];
  /** Literal: whether it is a number (no quotes) or a string. */
  readonly numeric: boolean;
  readonly item: Value | undefined;
}

interface Entry {
  readonly key: Uint8Array;
  readonly value: Value;
  readonly required: boolean;
  readonly bit: number;
  readonly index: number;
}

/** A schema's top-level keys, ready for matching on bytes. */
export interface RowShape {
  readonly entries: readonly Entry[];
  /** Entries by key length, for matching a key without making a string of it. */
  readonly byLength: readonly (readonly Entry[] | undefined)[];
  readonly requiredMask: number;
  readonly run: Entry | undefined;
  readonly id: Entry | undefined;
}

interface SchemaNode {
  readonly type: string;
  readonly pipe?: readonly SchemaNode[];
  readonly entries?: Readonly<Record<string, SchemaNode>>;
  readonly item?: SchemaNode;
  readonly wrapped?: SchemaNode;
  readonly options?: readonly unknown[];
  readonly literal?: unknown;
  readonly requirement?: unknown;
  readonly default?: unknown;
}

class Unsupported extends Error {}

const ASCII = /^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/;
const bytes = (text: string): Uint8Array => {
  if (!ASCII.test(text)) throw new Unsupported();
  return Uint8Array.from(text, (c) => c.charCodeAt(0));
};

const shapes = new WeakMap<AnySchema, RowShape | null>();

/** The byte shape of a loose-object row schema, or null when the schema uses anything else. */
export function rowShapeOf(schema: AnySchema): RowShape | null {
  let shape = shapes.get(schema);
  if (shape === undefined) {
    try {
      shape = compileShape(schema as unknown as SchemaNode);
    } catch (error) {
      if (!(error instanceof Unsupported)) throw error;
      shape = null;
    }
    shapes.set(schema, shape);
  }
  return shape;
}

function compileShape(node: SchemaNode): RowShape {
  if (node.type !== 'loose_object' || node.pipe !== undefined || node.entries === undefined) throw new Unsupported();
  const names = Object.keys(node.entries);
  if (names.length > 30) throw new Unsupported();
  const entries: Entry[] = names.map((name, i) => {
    // A key the prototype has is `in` every parsed row: leave such schemas to the ordinary path.
    if (name in Object.prototype) throw new Unsupported();
    let value = node.entries![name]!;
    let required = true;
    if (value.type === 'optional') {
      if (value.default !== undefined || value.pipe !== undefined) throw new Unsupported();
      required = false;
      value = value.wrapped!;
    }
    return { key: bytes(name), value: compileValue(value), required, bit: 1 << i, index: i };
  });
  const byLength: Entry[][] = [];
  for (const entry of entries) (byLength[entry.key.length] ??= []).push(entry);
  const find = (name: string) => entries.find((entry) => names[entries.indexOf(entry)] === name);
  const run = find('run');
  const id = find('id');
  // The binding check needs `run` and `id` as plain required strings.
  for (const entry of [run, id]) {
    if (entry !== undefined && (entry.value.kind !== Kind.String || entry.value.nullable || !entry.required)) throw new Unsupported();
  }
  return {
    entries,
    byLength,
    requiredMask: entries.reduce((mask, entry) => (entry.required ? mask | entry.bit : mask), 0),
    run,
    id,
  };
}

function compileValue(node: SchemaNode): Value {
  let nullable = false;
  if (node.type === 'nullable') {
    if (node.default !== undefined || node.pipe !== undefined) throw new Unsupported();
    nullable = true;
    node = node.wrapped!;
  }
  const base = { nullable, int: false, min: undefined as number | undefined, options: [] as Uint8Array[], numeric: false, item: undefined as Value | undefined };
  const actions = node.pipe === undefined ? [] : node.pipe.slice(1);
  if (node.type !== 'number' && actions.length > 0) throw new Unsupported();
  switch (node.type) {
    case 'unknown':
      return { ...base, kind: Kind.Any };
    case 'string':
      return { ...base, kind: Kind.String };
    case 'boolean':
      return { ...base, kind: Kind.Boolean };
    case 'number': {
      let int = false;
      let min: number | undefined;
      for (const action of actions) {
        if (action.type === 'safe_integer' || action.type === 'integer') int = true;
        else if (action.type === 'min_value' && typeof action.requirement === 'number' && Number.isFinite(action.requirement)) min = Math.max(min ?? -Infinity, action.requirement);
        else throw new Unsupported();
      }
      if (min !== undefined && !int) throw new Unsupported();
      return { ...base, kind: Kind.Number, int, min };
    }
    case 'literal': {
      const literal = node.literal;
      if (typeof literal === 'string') return { ...base, kind: Kind.Literal, options: [bytes(literal)] };
      if (typeof literal === 'number' && Number.isSafeInteger(literal) && literal >= 0 && !Object.is(literal, -0)) {
        return { ...base, kind: Kind.Literal, options: [bytes(String(literal))], numeric: true };
      }
      throw new Unsupported();
    }
    case 'picklist': {
      if (!node.options!.every((option) => typeof option === 'string')) throw new Unsupported();
      return { ...base, kind: Kind.Picklist, options: (node.options as string[]).map(bytes) };
    }
    case 'array':
      return { ...base, kind: Kind.Array, item: compileValue(node.item!) };
    default:
      throw new Unsupported();
  }
}

const QUOTE = 0x22;
/** Bytes that stand for themselves inside a JSON string: printable ASCII but `"` and `\\`. */
const PLAIN = new Uint8Array(256);
for (let c = 0x20; c < 0x80; c++) if (c !== 0x22 && c !== 0x5c) PLAIN[c] = 1;
const BACKSLASH = 0x5c;
const MAX_DEPTH = 64;

/**
 * Checks lines of one file against one shape, bound to one run. After `accept` returns
 * true, `idStart`/`idEnd` are the byte range of the row's id (ASCII, no escapes).
 */
export class RowBytesCheck {
  idStart = 0;
  idEnd = 0;
  private b: Uint8Array = new Uint8Array(0);
  private end = 0;
  // Set by str(): whether the string just scanned held a backslash.
  private escaped = false;
  private readonly shape: RowShape;
  private readonly runBytes: Uint8Array | undefined;
  // Hint: rows of one file share their key order, so the key that followed each key last
  // time (index shape.entries.length: the first key) is tried first, byte for byte.
  private readonly following: (Entry | undefined)[];

  constructor(shape: RowShape, runId: string | undefined) {
    this.shape = shape;
    this.following = new Array<Entry | undefined>(shape.entries.length + 1).fill(undefined);
    let runBytes: Uint8Array | undefined;
    if (runId !== undefined) {
      try {
        runBytes = bytes(runId);
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

  private ws(i: number): number {
    const b = this.b;
    let c = b[i];
    while (c === 0x20 || c === 0x09 || c === 0x0d) c = b[++i];
    return i;
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

  /** A string at `i` (its opening quote): the index after its closing quote, or -1. */
  private str(i: number): number {
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
  private num(i: number): number {
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

  private word(i: number, word: readonly number[]): number {
    const b = this.b;
    if (i + word.length > this.end) return -1;
    for (let k = 0; k < word.length; k++) if (b[i + k] !== word[k]) return -1;
    return i + word.length;
  }

  /** Any JSON value at `i`: the index after it, or -1. */
  private any(i: number, depth: number): number {
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

const TRUE = [0x74, 0x72, 0x75, 0x65];
const FALSE = [0x66, 0x61, 0x6c, 0x73, 0x65];
const NULL = [0x6e, 0x75, 0x6c, 0x6c];

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}
