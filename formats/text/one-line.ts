/**
 * What no printed or rendered value may carry raw: every character of the Unicode
 * categories Cc (C0 and C1 controls, DEL: CR, VT, FF, ESC, NEL U+0085), Cf (format
 * characters: the bidirectional controls U+061C, U+200E, U+200F, U+202A-U+202E,
 * U+2066-U+2069, which reorder how a line reads, an override making `xobnI` read as
 * `Inbox`; the zero-width U+200B-U+200D, U+2060 and U+FEFF, which hide inside a word; the
 * tag characters U+E0000-U+E007F), Zl and Zp (U+2028, U+2029, which some readers take as
 * line breaks), and any lone surrogate (half a character, which no reader shows the same).
 * The class by its categories, not a list: a format character Unicode adds is escaped too.
 */
export const UNSAFE_CHARACTER = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;
/** The same set less what JSON.stringify already escapes (C0 controls, `"`, `\\` and lone surrogates). */
const JSON_RAW = /[\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}]/gu;

/** A character as JSON writes it escaped: one `\uXXXX` per UTF-16 unit (a tag character is two). */
export function unicodeEscape(c: string): string {
  let out = '';
  for (let i = 0; i < c.length; i++) out += `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`;
  return out;
}

/**
 * The one escaping renderer for output lines and Markdown renders. Escapes line breaks
 * and the other characters of {@link UNSAFE_CHARACTER} as JSON does (`\n`, `\u0085`,
 * `\u200b`), so a value taken from an input or the environment (a run id, a key, a path,
 * a title) can never start a line of its own in output that parents grep, nor reorder
 * or hide inside the line it is on. Idempotent: its output holds none of the characters
 * it escapes.
 */
export function oneLine(text: string): string {
  return text.replace(UNSAFE_CHARACTER, (c) => SHORT[c] ?? unicodeEscape(c));
}

/**
 * `text` with every character of {@link UNSAFE_CHARACTER} but line feeds and tabs
 * written out (`\u200b`): a file's text shown as the lines it has, with nothing in it
 * that reorders, hides or breaks a line where the reader does not see it.
 */
export function visibleText(text: string): string {
  return text.replace(UNSAFE_CHARACTER, (c) => (c === '\n' || c === '\t' ? c : unicodeEscape(c)));
}

/**
 * JSON.stringify for a line of output: the characters JSON leaves raw inside strings
 * (U+2028, NEL, bidi controls, zero-width characters) are escaped too, so the line stays
 * one line and reads as it is. The result parses to the same value.
 */
export function jsonLine(value: unknown): string {
  return (JSON.stringify(value) ?? 'null').replace(JSON_RAW, unicodeEscape);
}

const SHORT: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
