const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const lenientUtf8 = new TextDecoder('utf-8');

/**
 * A result file's bytes as text, strictly: `badLine` is the first line (1-based) that is
 * not UTF-8, or null. Every result laneward reads from a provider (a reviewer's, an
 * agent's turn, an observer's verdict) goes through this one check: undecodable bytes are
 * refused by the caller, never silently replaced with U+FFFD. `text` is lenient on that
 * path, for callers that look further before refusing. A leading BOM is dropped.
 */
export function decodeUtf8(bytes: Uint8Array): { text: string; badLine: number | null } {
  try {
    return { text: strictUtf8.decode(bytes), badLine: null };
  } catch {
    // Only on this path: find the line.
    return { text: lenientUtf8.decode(bytes), badLine: firstUndecodableLine(bytes) };
  }
}

/** No UTF-8 sequence contains a newline byte, so lines decode on their own. */
function firstUndecodableLine(bytes: Uint8Array): number {
  let from = 0;
  for (let line = 1; ; line += 1) {
    const found = bytes.indexOf(0x0a, from);
    const end = found < 0 ? bytes.length : found;
    try {
      strictUtf8.decode(bytes.subarray(from, end));
    } catch {
      return line;
    }
    if (found < 0) return line;
    from = found + 1;
  }
}
