/**
 * JSON.stringify for values read from input, without recursion: an explicit stack walks
 * arrays and objects, so a row nested ten thousand levels deep renders instead of
 * overflowing the call stack. Output equals JSON.stringify (no indentation) for plain
 * JSON data; `undefined` members are skipped and `undefined` array items print null, as
 * there. Values with toJSON (Dates) are not expected and print as plain objects.
 */
export function jsonText(value: unknown): string {
  const out: string[] = [];
  // A frame is an array or object being printed and the index of its next member.
  type Frame = { readonly value: unknown[] | Record<string, unknown>; readonly keys: string[] | null; next: number };
  const stack: Frame[] = [];
  const open = (item: unknown, inArray: boolean): boolean => {
    if (item === null) return void out.push('null'), false;
    switch (typeof item) {
      case 'string':
        out.push(JSON.stringify(item));
        return false;
      case 'number':
        out.push(Number.isFinite(item) ? String(item) : 'null');
        return false;
      case 'boolean':
        out.push(item ? 'true' : 'false');
        return false;
      case 'object':
        if (Array.isArray(item)) {
          out.push('[');
          stack.push({ value: item, keys: null, next: 0 });
        } else {
          out.push('{');
          stack.push({ value: item as Record<string, unknown>, keys: Object.keys(item), next: 0 });
        }
        return true;
      default:
        // undefined, functions, symbols: null inside an array, skipped by the caller in an object.
        if (inArray) out.push('null');
        return false;
    }
  };
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol') return 'null';
  open(value, false);
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    if (frame.keys === null) {
      const items = frame.value as unknown[];
      if (frame.next >= items.length) {
        out.push(']');
        stack.pop();
        continue;
      }
      if (frame.next > 0) out.push(',');
      open(items[frame.next++], true);
      continue;
    }
    const record = frame.value as Record<string, unknown>;
    let opened = false;
    while (frame.next < frame.keys.length) {
      const key = frame.keys[frame.next++]!;
      const member = record[key];
      if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
      if (out[out.length - 1] !== '{') out.push(',');
      out.push(JSON.stringify(key), ':');
      if (open(member, false)) {
        opened = true;
        break;
      }
    }
    if (!opened && frame.next >= frame.keys.length && stack[stack.length - 1] === frame) {
      out.push('}');
      stack.pop();
    }
  }
  return out.join('');
}

/** Where a text stops being JSON: 1-based line and column (in UTF-16 units), and what was expected there. */
export interface JsonSyntaxError {
  readonly line: number;
  readonly column: number;
  readonly expected: string;
}

/** JSON.parse with a syntax error as a line and column, not the engine's byte position (or none). */
export function parseJson(text: string): { readonly ok: true; readonly value: unknown } | ({ readonly ok: false } & JsonSyntaxError) {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    // Hint: the engine's message differs by engine and often names no position; only a
    // failed parse pays for the second, locating scan.
    const found = jsonSyntaxError(text) ?? { offset: text.length, expected: 'a JSON value' };
    return { ok: false, ...lineColumn(text, found.offset), expected: found.expected };
  }
}

/** `line 3 column 14: expected ',' or '}'`, for a message. */
export function jsonSyntaxText(error: JsonSyntaxError): string {
  return `line ${error.line} column ${error.column}: expected ${error.expected}`;
}

function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, column: offset - start + 1 };
}

const WS = /[ \t\n\r]*/y;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const LITERAL = /true|false|null/y;

/**
 * The offset of the first syntax error in `text` and what was expected there, or null
 * when it is one JSON document. A scan with an explicit stack: a deeply nested input
 * cannot overflow the call stack.
 */
export function jsonSyntaxError(text: string): { offset: number; expected: string } | null {
  let at = 0;
  const skip = () => {
    WS.lastIndex = at;
    WS.exec(text);
    at = WS.lastIndex;
  };
  const match = (re: RegExp): boolean => {
    re.lastIndex = at;
    if (re.exec(text) === null) return false;
    at = re.lastIndex;
    return true;
  };
  // Each frame: the container's closing character and whether a member was read.
  const stack: { close: '}' | ']'; members: number }[] = [];
  const fail = (expected: string) => ({ offset: at, expected });
  for (;;) {
    skip();
    const top = stack[stack.length - 1];
    if (top?.close === '}') {
      if (text[at] === '}' && top.members === 0) { at++; stack.pop(); }
      else {
        if (!match(STRING)) return fail(top.members === 0 ? 'a "key" in double quotes or \'}\'' : 'a "key" in double quotes');
        skip();
        if (text[at] !== ':') return fail("':'");
        at++;
        skip();
        top.members++;
        if (!value()) return fail('a JSON value');
      }
    } else if (top?.close === ']') {
      if (text[at] === ']' && top.members === 0) { at++; stack.pop(); }
      else {
        top.members++;
        if (!value()) return fail(top.members === 1 ? "a JSON value or ']'" : 'a JSON value');
      }
    } else if (!value()) return fail('a JSON value');
    // After a value: close containers, or a comma for the next member.
    for (;;) {
      skip();
      const open = stack[stack.length - 1];
      if (open === undefined) return at === text.length ? null : fail('the end of the text (one JSON document)');
      if (open.members === 0) break; // a container just opened: read its first member
      if (text[at] === ',') { at++; break; }
      if (text[at] !== open.close) return fail(`',' or '${open.close}'`);
      at++;
      stack.pop();
    }
  }

  /** Reads a scalar, or opens a container (its members are read by the loop). */
  function value(): boolean {
    const c = text[at];
    if (c === '{' || c === '[') {
      at++;
      stack.push({ close: c === '{' ? '}' : ']', members: 0 });
      return true;
    }
    return match(STRING) || match(NUMBER) || match(LITERAL);
  }
}
