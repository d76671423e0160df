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
