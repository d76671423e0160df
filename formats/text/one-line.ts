/**
 * What no printed or rendered value may carry raw: C0 and C1 controls (CR, VT, FF, ESC,
 * NEL U+0085), DEL, the Unicode line and paragraph separators (U+2028, U+2029) and the
 * bidirectional controls (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069), which
 * reorder how a line reads (an override makes `xobnI` read as `Inbox`).
 */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
/** The same set less what JSON.stringify already escapes (C0 controls, `"` and `\\`). */
const JSON_RAW = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const hex = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/**
 * The one escaping renderer for output lines and Markdown renders. Escapes line breaks
 * and the other characters of {@link CONTROL} as JSON does (`\n`, `\u0085`), so a value
 * taken from an input or the environment (a run id, a key, a path, a title) can never
 * start a line of its own in output that parents grep, nor reorder the line it is on.
 * Idempotent: its output holds none of the characters it escapes.
 */
export function oneLine(text: string): string {
  return text.replace(CONTROL, (c) => SHORT[c] ?? hex(c));
}

/**
 * JSON.stringify for a line of output: the characters JSON leaves raw inside strings
 * (U+2028, NEL, bidi controls) are escaped too, so the line stays one line and reads as
 * it is. The result parses to the same value.
 */
export function jsonLine(value: unknown): string {
  return (JSON.stringify(value) ?? 'null').replace(JSON_RAW, hex);
}

const SHORT: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
