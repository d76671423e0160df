/**
 * The most characters of one value a printed line repeats (an error's detail, a path):
 * a 100,000-character reply quoted whole made a line no terminal or grep reads.
 */
export const PRINTED_VALUE_MAX = 1_000;

/**
 * `text` as printed: whole when it is at most `max` UTF-16 units, else its first `max`
 * (never half a surrogate pair) and how long it was, so the cut is never mistaken for
 * the value.
 */
export function bounded(text: string, max = PRINTED_VALUE_MAX): string {
  if (text.length <= max) return text;
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}... (cut: ${text.length} characters)`;
}
