import type { AnySchema } from './index.ts';
import { walkSchema, type SchemaAction, type SchemaTree } from './walk.ts';

/** A yes/no check derived from a valibot schema: true exactly when valibot would accept. */
export type FastCheck = (value: unknown) => boolean;

/**
 * Compiles a valibot schema into one straight-line predicate, so the validator's hot
 * path answers "valid" without building valibot's datasets and output copies. It covers
 * what walk.ts reads of a schema and mirrors valibot's semantics for it (a key `in` the
 * object is checked, an absent optional key is skipped, records skip non-own and
 * prototype keys). A schema beyond the walk (a custom `check`, a default) yields
 * undefined and the caller uses valibot alone. A false answer is never reported as is:
 * the caller asks valibot for the issues.
 */
export function compileCheck(schema: AnySchema): FastCheck | undefined {
  const tree = walkSchema(schema);
  if (tree === undefined) return undefined;
  const helpers: string[] = [];
  const constants: unknown[] = [];
  let counter = 0;
  const constant = (value: unknown) => `c[${constants.push(value) - 1}]`;

  // Emits statements that `return false` when `v` does not match `node`.
  const emit = (node: SchemaTree, v: string): string => emitType(node, v) + node.actions.map((action) => emitAction(action, v)).join('');

  const emitType = (node: SchemaTree, v: string): string => {
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
        return `if (!(${node.options.map((option) => `${v} === ${constant(option)}`).join(' || ')})) return false;`;
      case 'nullable':
        return `if (${v} !== null) {${emit(node.wrapped, v)}}`;
      case 'optional':
        return `if (${v} !== undefined) {${emit(node.wrapped, v)}}`;
      case 'array': {
        const i = `i${counter++}`;
        const item = `v${counter++}`;
        return `if (!Array.isArray(${v})) return false; for (let ${i} = 0; ${i} < ${v}.length; ${i}++) { const ${item} = ${v}[${i}]; ${emit(node.item, item)} }`;
      }
      case 'loose_object': {
        let out = `if (!(${v} && typeof ${v} === "object")) return false;`;
        for (const { key, value: entry } of node.entries) {
          const k = constant(key);
          const value = `v${counter++}`;
          const check = `{ const ${value} = ${v}[${k}]; ${emit(entry, value)} }`;
          out += entry.type === 'optional' ? `if (${k} in ${v}) ${check}` : `if (!(${k} in ${v})) return false; ${check}`;
        }
        return out;
      }
      case 'record': {
        const k = `k${counter++}`;
        const value = `v${counter++}`;
        return (
          `if (!(${v} && typeof ${v} === "object")) return false;` +
          `for (const ${k} in ${v}) { if (!Object.hasOwn(${v}, ${k}) || ${k} === "__proto__" || ${k} === "prototype" || ${k} === "constructor") continue;` +
          ` const ${value} = ${v}[${k}]; ${emit(node.value, value)} }`
        );
      }
      case 'union': {
        const names = node.options.map((option) => {
          const name = `u${counter++}`;
          helpers.push(`function ${name}(x) { ${emit(option, 'x')} return true; }`);
          return `${name}(${v})`;
        });
        return `if (!(${names.join(' || ')})) return false;`;
      }
    }
  };

  const emitAction = (action: SchemaAction, v: string): string => {
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
    }
  };

  const body = emit(tree, 'v');
  const source = `${helpers.join('\n')}\nreturn function fastCheck(v) { ${body} return true; };`;
  return new Function('c', source)(constants) as FastCheck;
}
