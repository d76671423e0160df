import type { AnySchema } from '../schemas/index.ts';
import { Unsupported, walkSchema, type SchemaTree } from '../schemas/walk.ts';

/**
 * The byte shape of a row schema: what row-bytes.ts matches a JSONL line against without
 * decoding it. Built from the schema's walk (formats/schemas/walk.ts), narrowed to what
 * can be checked on bytes for certain: plain ASCII keys and literals, strings, booleans,
 * numbers (safe integers when an action asks for integers), picklists of strings, arrays
 * of those, one level of nullable and optional. Any other schema has no shape.
 */

export const enum Kind {
  Any, // v.unknown(): any JSON value
  String,
  Boolean,
  Number, // any JSON number; `min`/`int` narrow it
  Literal, // a string literal (bytes) or a safe non-negative integer literal (digits)
  Picklist, // string options
  Array,
}

export interface Value {
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

export interface Entry {
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

const ASCII = /^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/;

/** The bytes of text that stands for itself inside a JSON string; Unsupported for any other. */
export function plainBytes(text: string): Uint8Array {
  if (!ASCII.test(text)) throw new Unsupported();
  return Uint8Array.from(text, (c) => c.charCodeAt(0));
}

const shapes = new WeakMap<AnySchema, RowShape | null>();

/** The byte shape of a loose-object row schema, or null when the schema uses anything else. */
export function rowShapeOf(schema: AnySchema): RowShape | null {
  let shape = shapes.get(schema);
  if (shape === undefined) {
    const tree = walkSchema(schema);
    try {
      shape = tree === undefined ? null : compileShape(tree);
    } catch (error) {
      if (!(error instanceof Unsupported)) throw error;
      shape = null;
    }
    shapes.set(schema, shape);
  }
  return shape;
}

function compileShape(node: SchemaTree): RowShape {
  if (node.type !== 'loose_object' || node.actions.length > 0) throw new Unsupported();
  if (node.entries.length > 30) throw new Unsupported();
  const entries: Entry[] = node.entries.map(({ key: name, value: schema }, i) => {
    // A key the prototype has is `in` every parsed row: leave such schemas to the ordinary path.
    if (name in Object.prototype) throw new Unsupported();
    let value = schema;
    let required = true;
    if (value.type === 'optional') {
      if (value.actions.length > 0) throw new Unsupported();
      required = false;
      value = value.wrapped;
    }
    return { key: plainBytes(name), value: compileValue(value), required, bit: 1 << i, index: i };
  });
  const byLength: Entry[][] = [];
  for (const entry of entries) (byLength[entry.key.length] ??= []).push(entry);
  const find = (name: string) => entries.find((entry) => node.entries[entry.index]!.key === name);
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

function compileValue(node: SchemaTree): Value {
  let nullable = false;
  if (node.type === 'nullable') {
    if (node.actions.length > 0) throw new Unsupported();
    nullable = true;
    node = node.wrapped;
  }
  const base = { nullable, int: false, min: undefined as number | undefined, options: [] as Uint8Array[], numeric: false, item: undefined as Value | undefined };
  if (node.type !== 'number' && node.actions.length > 0) throw new Unsupported();
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
      for (const action of node.actions) {
        if (action.type === 'safe_integer' || action.type === 'integer') int = true;
        else if (action.type === 'min_value' && typeof action.requirement === 'number' && Number.isFinite(action.requirement)) min = Math.max(min ?? -Infinity, action.requirement);
        else throw new Unsupported();
      }
      if (min !== undefined && !int) throw new Unsupported();
      return { ...base, kind: Kind.Number, int, min };
    }
    case 'literal': {
      const literal = node.literal;
      if (typeof literal === 'string') return { ...base, kind: Kind.Literal, options: [plainBytes(literal)] };
      if (typeof literal === 'number' && Number.isSafeInteger(literal) && literal >= 0 && !Object.is(literal, -0)) {
        return { ...base, kind: Kind.Literal, options: [plainBytes(String(literal))], numeric: true };
      }
      throw new Unsupported();
    }
    case 'picklist': {
      if (!node.options.every((option) => typeof option === 'string')) throw new Unsupported();
      return { ...base, kind: Kind.Picklist, options: (node.options as string[]).map(plainBytes) };
    }
    case 'array':
      return { ...base, kind: Kind.Array, item: compileValue(node.item) };
    default:
      throw new Unsupported();
  }
}
