/**
 * Byte positions inside one JSON document that is already known to parse: where the
 * top-level object's members are, and how to add one array item without rewriting
 * anything else. Scans with an explicit depth counter, never recursion.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const isSpace = (byte: number) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;

interface Span {
  readonly start: number;
  readonly end: number;
}

interface Member {
  readonly key: string;
  readonly keyStart: number;
  readonly keyEnd: number;
  readonly value: Span;
}

function skipSpace(bytes: Uint8Array, at: number): number {
  while (at < bytes.length && isSpace(bytes[at]!)) at++;
  return at;
}

/** The end (exclusive) of the string starting at the quote `at`. */
function skipString(bytes: Uint8Array, at: number): number {
  for (let i = at + 1; i < bytes.length; i++) {
    const byte = bytes[i]!;
    if (byte === BACKSLASH) i++;
    else if (byte === QUOTE) return i + 1;
  }
  throw new Error('unterminated string');
}

/** The end (exclusive) of the value starting at `at`: nested values are walked by depth. */
function skipValue(bytes: Uint8Array, at: number): number {
  const first = bytes[at]!;
  if (first === QUOTE) return skipString(bytes, at);
  if (first !== 0x7b && first !== 0x5b) {
    let i = at;
    while (i < bytes.length && !isSpace(bytes[i]!) && bytes[i] !== 0x2c && bytes[i] !== 0x7d && bytes[i] !== 0x5d) i++;
    return i;
  }
  let depth = 0;
  for (let i = at; i < bytes.length; i++) {
    const byte = bytes[i]!;
    if (byte === QUOTE) i = skipString(bytes, i) - 1;
    else if (byte === 0x7b || byte === 0x5b) depth++;
    else if ((byte === 0x7d || byte === 0x5d) && --depth === 0) return i + 1;
  }
  throw new Error('unterminated value');
}

/** Items (objects) or elements (arrays) of the container starting at `open`, and where it closes. */
function children(bytes: Uint8Array, open: number, object: boolean): { members: Member[]; items: Span[]; close: number } {
  const members: Member[] = [];
  const items: Span[] = [];
  let at = skipSpace(bytes, open + 1);
  const closer = object ? 0x7d : 0x5d;
  if (bytes[at] === closer) return { members, items, close: at };
  for (;;) {
    if (object) {
      const keyStart = at;
      const keyEnd = skipString(bytes, at);
      const key = JSON.parse(Buffer.from(bytes.subarray(keyStart, keyEnd)).toString('utf8')) as string;
      at = skipSpace(bytes, keyEnd) + 1; // the colon
      const valueStart = skipSpace(bytes, at);
      const valueEnd = skipValue(bytes, valueStart);
      members.push({ key, keyStart, keyEnd, value: { start: valueStart, end: valueEnd } });
      at = skipSpace(bytes, valueEnd);
    } else {
      const end = skipValue(bytes, at);
      items.push({ start: at, end });
      at = skipSpace(bytes, end);
    }
    if (bytes[at] === closer) return { members, items, close: at };
    at = skipSpace(bytes, at + 1); // the comma
  }
}

/**
 * Adds `item` (JSON text) as the last element of the array in the top-level member
 * `key`, or adds that member holding `[item]` when there is none. Every other byte stays
 * as written; the new text copies the document's own spacing (the whitespace before the
 * last element or member, and the key-colon spacing). With a key given twice, the last
 * one is the one JSON.parse keeps, so that is the one changed. `bytes` must hold one
 * JSON object that parses; the member, when present, must be an array.
 */
export function appendToArrayMember(bytes: Uint8Array, key: string, item: (spaced: boolean) => string): Buffer {
  const open = skipSpace(bytes, 0);
  const top = children(bytes, open, true);
  const last = top.members[top.members.length - 1];
  const colon = last === undefined ? ': ' : Buffer.from(bytes.subarray(last.keyEnd, last.value.start)).toString('utf8');
  const text = item(colon.endsWith(' '));
  const existing = top.members.filter((member) => member.key === key).pop();
  const splice = (at: number, end: number, insert: string) =>
    Buffer.concat([bytes.subarray(0, at), Buffer.from(insert), bytes.subarray(end)]);
  if (existing !== undefined) {
    const array = children(bytes, existing.value.start, false);
    const lastItem = array.items[array.items.length - 1];
    if (lastItem === undefined) return splice(existing.value.start, existing.value.end, `[${text}]`);
    const before = array.items.length > 1 ? array.items[array.items.length - 2]!.end : existing.value.start;
    const gap = leadingSpace(bytes, before, lastItem.start);
    return splice(lastItem.end, lastItem.end, `,${gap}${text}`);
  }
  const member = `${JSON.stringify(key)}${colon}[${text}]`;
  if (last === undefined) return splice(open + 1, top.close, member);
  const before = top.members.length > 1 ? top.members[top.members.length - 2]!.value.end : open;
  return splice(last.value.end, last.value.end, `,${leadingSpace(bytes, before, last.keyStart)}${member}`);
}

/** The whitespace right before `start`, after the separator that follows `from`. */
function leadingSpace(bytes: Uint8Array, from: number, start: number): string {
  let at = start;
  while (at > from && isSpace(bytes[at - 1]!)) at--;
  return Buffer.from(bytes.subarray(at, start)).toString('utf8');
}
