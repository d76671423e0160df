import type { AnySchema } from './index.ts';

/**
 * A valibot schema read once into plain data: the node and action kinds the compiled
 * checks (the predicate of compile.ts and the byte check of formats/jsonl/row-shape.ts)
 * know how to mirror, and nothing else. Each compiler narrows this further on its own; the
 * one place that reads valibot's schema tree, and decides what is beyond both, is here.
 */
export type SchemaTree =
  | Leaf<'unknown' | 'string' | 'number' | 'boolean'>
  | (Leaf<'literal'> & { readonly literal: unknown })
  | (Leaf<'picklist'> & { readonly options: readonly unknown[] })
  | (Leaf<'nullable' | 'optional'> & { readonly wrapped: SchemaTree })
  | (Leaf<'array'> & { readonly item: SchemaTree })
  | (Leaf<'loose_object'> & { readonly entries: readonly ObjectEntry[] })
  /** A record keyed by plain strings (a key schema with a pipe is beyond the walk). */
  | (Leaf<'record'> & { readonly value: SchemaTree })
  | (Leaf<'union'> & { readonly options: readonly SchemaTree[] });

interface Leaf<T extends string> {
  readonly type: T;
  /** The schema's pipe after the schema itself, in order. */
  readonly actions: readonly SchemaAction[];
}

export interface ObjectEntry {
  readonly key: string;
  readonly value: SchemaTree;
}

/** The pipe actions the walk knows; `requirement` is valibot's own (a number, a RegExp). */
export type SchemaAction =
  | { readonly type: 'integer' | 'safe_integer' }
  | { readonly type: 'min_value' | 'min_length' | 'regex'; readonly requirement: unknown };

/** valibot's schema objects as far as the walk reads them. */
interface ValibotNode {
  readonly type: string;
  readonly pipe?: readonly ValibotNode[];
  readonly entries?: Readonly<Record<string, ValibotNode>>;
  readonly item?: ValibotNode;
  readonly key?: ValibotNode;
  readonly value?: ValibotNode;
  readonly wrapped?: ValibotNode;
  readonly options?: readonly unknown[];
  readonly literal?: unknown;
  readonly requirement?: unknown;
  readonly default?: unknown;
}

/** Thrown inside a walk or a compiler's narrowing: the schema uses something not mirrored. */
export class Unsupported extends Error {}

const walked = new WeakMap<AnySchema, SchemaTree | null>();

/**
 * The schema as a {@link SchemaTree}, or undefined when any part of it is beyond the walk
 * (a custom `check`, a default, a transform, another schema type): then the compiled checks
 * do not exist for it and valibot alone decides.
 */
export function walkSchema(schema: AnySchema): SchemaTree | undefined {
  let tree = walked.get(schema);
  if (tree === undefined) {
    try {
      tree = walkNode(schema as unknown as ValibotNode);
    } catch (error) {
      if (!(error instanceof Unsupported)) throw error;
      tree = null;
    }
    walked.set(schema, tree);
  }
  return tree ?? undefined;
}

function walkNode(node: ValibotNode): SchemaTree {
  const actions = node.pipe === undefined ? [] : node.pipe.slice(1).map(walkAction);
  switch (node.type) {
    case 'unknown':
    case 'string':
    case 'number':
    case 'boolean':
      return { type: node.type, actions };
    case 'literal':
      return { type: 'literal', literal: node.literal, actions };
    case 'picklist':
      return { type: 'picklist', options: node.options!, actions };
    case 'nullable':
    case 'optional':
      // A default turns an absent value into a present one: not a yes/no check.
      if (node.default !== undefined) throw new Unsupported();
      return { type: node.type, wrapped: walkNode(node.wrapped!), actions };
    case 'array':
      return { type: 'array', item: walkNode(node.item!), actions };
    case 'loose_object':
      return { type: 'loose_object', entries: Object.entries(node.entries!).map(([key, value]) => ({ key, value: walkNode(value) })), actions };
    case 'record':
      if (node.key!.type !== 'string' || node.key!.pipe !== undefined) throw new Unsupported();
      return { type: 'record', value: walkNode(node.value!), actions };
    case 'union':
      return { type: 'union', options: node.options!.map((option) => walkNode(option as ValibotNode)), actions };
    default:
      throw new Unsupported();
  }
}

function walkAction(action: ValibotNode): SchemaAction {
  switch (action.type) {
    case 'integer':
    case 'safe_integer':
      return { type: action.type };
    case 'min_value':
    case 'min_length':
    case 'regex':
      return { type: action.type, requirement: action.requirement };
    default:
      throw new Unsupported();
  }
}
