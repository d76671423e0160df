import type { AnySchema } from './index.ts';

/** A yes/no check derived from a valibot schema: true exactly when valibot would accept. */
export type FastCheck = (value: unknown) => boolean;

interface Node {
  readonly type: string;
  readonly pipe?: readonly Node[];
  readonly entries?: Readonly<Record<string, Node>>;
  readonly item?: Node;
  readonly key?: Node;
  readonly value?: Node;
  readonly wrapped?: Node;
  readonly options?: readonly unknown[];
  readonly literal?: unknown;
  readonly requirement?: unknown;
  readonly default?: unknown;
}

class Unsupported extends Error {}

/**
 * Compiles a valibot schema into one straight-line predicate, so the validator's hot
 * path answers "valid" without building valibot's datasets and output copies. It covers
 * the node and action types the artifact schemas use and mirrors valibot's semantics for
 * them (a key `in` the object is checked, an absent optional key is skipped, records skip
 * non-own and prototype keys). Anything else (a custom `check`, a default) yields
 * undefined and the caller uses valibot alone. A false answer is never reported as is:
 * the caller asks valibot for the issues.
 */
export function compileCheck(schema: AnySchema): FastCheck | undefined {
  const helpers: string[] = [];
  const constants: unknown[] = [];
  let counter = 0;
  const constant = (value: unknown) => `c[${constants.push(value) - 1}]`;

  // Emits statements that `return false` when `v` does not match `node`.
  const emit = (node: Node, v: string): string => {
    const actions = node.pipe === undefined ? [] : node.pipe.slice(1);
    return emitType(node, v) + actions.map((action) => emitAction(action, v)).join('');
  };

  const emitType = (node: Node, v: string): string => {
    switch (node.type) {
      case 'string':
        return `if (typeof ${v} !== "string") return false;`;
      case 'number':
        return `if (typeof ${v} !== "number" || Number.isNaN(${v})) return false;`;
      case 'boolean':
        return `if (typeof ${v} !== "boolean") return false;`;
      case 'unknown':
        return '';
      case 'literal':
        return `if (${v} !== ${constant(node.literal)}) return false;`;
      case 'picklist':
        return `if (!(${node.options!.map((option) => `${v} === ${constant(option)}`).join(' || ')})) return false;`;
      case 'nullable': {
        if (node.default !== undefined) throw new Unsupported();
        return `if (${v} !== null) {${emit(node.wrapped!, v)}}`;
      }
      case 'optional': {
        if (node.default !== undefined) throw new Unsupported();
        return `if (${v} !== undefined) {${emit(node.wrapped!, v)}}`;
      }
      case 'array': {
        const i = `i${counter++}`;
        const item = `v${counter++}`;
        return `if (!Array.isArray(${v})) return false; for (let ${i} = 0; ${i} < ${v}.length; ${i}++) { const ${item} = ${v}[${i}]; ${emit(node.item!, item)} }`;
      }
      case 'loose_object': {
        let out = `if (!(${v} && typeof ${v} === "object")) return false;`;
        for (const [key, entry] of Object.entries(node.entries!)) {
          const k = constant(key);
          const value = `v${counter++}`;
          const optional = entry.type === 'optional' || entry.type === 'nullish' || entry.type === 'exact_optional';
          const check = `{ const ${value} = ${v}[${k}]; ${emit(entry, value)} }`;
          out += optional ? `if (${k} in ${v}) ${check}` : `if (!(${k} in ${v})) return false; ${check}`;
        }
        return out;
      }
      case 'record': {
        if (node.key!.type !== 'string' || node.key!.pipe !== undefined) throw new Unsupported();
        const k = `k${counter++}`;
        const value = `v${counter++}`;
        return (
          `if (!(${v} && typeof ${v} === "object")) return false;` +
          `for (const ${k} in ${v}) { if (!Object.hasOwn(${v}, ${k}) || ${k} === "__proto__" || ${k} === "prototype" || ${k} === "constructor") continue;` +
          ` const ${value} = ${v}[${k}]; ${emit(node.value!, value)} }`
        );
      }
      case 'union': {
        const names = node.options!.map((option) => {
          const name = `u${counter++}`;
          helpers.push(`function ${name}(x) { ${emit(option as Node, 'x')} return true; }`);
          return `${name}(${v})`;
        });
        return `if (!(${names.join(' || ')})) return false;`;
      }
      default:
        throw new Unsupported();
    }
  };

  const emitAction = (action: Node, v: string): string => {
    switch (action.type) {
      case 'integer':
        return `if (!Number.isInteger(${v})) return false;`;
      case 'safe_integer':
        return `if (!Number.isSafeInteger(${v})) return false;`;
      case 'min_value':
        return `if (!(${v} >= ${constant(action.requirement)})) return false;`;
      case 'min_length':
        return `if (!(${v}.length >= ${constant(action.requirement)})) return false;`;
      case 'regex':
        return `if (!${constant(action.requirement)}.test(${v})) return false;`;
      default:
        throw new Unsupported();
    }
  };

  try {
    const body = emit(schema as unknown as Node, 'v');
    const source = `${helpers.join('\n')}\nreturn function fastCheck(v) { ${body} return true; };`;
    return new Function('c', source)(constants) as FastCheck;
  } catch (error) {
    if (error instanceof Unsupported) return undefined;
    throw error;
  }
}
