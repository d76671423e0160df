import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { errnoCode } from '../../formats/error.ts';

export type BoundedRead =
  | { readonly ok: true; readonly bytes: Buffer }
  | { readonly ok: false; readonly reason: 'absent' | 'not_file' | 'too_large' | 'unreadable'; readonly detail: string };

/**
 * Reads a whole input file through one descriptor: a regular file only (opened
 * non-blocking, so a FIFO cannot hang the caller), at most `maxBytes`, re-checked while
 * reading so a file that grows past the cap is refused rather than read without end.
 */
export function readBounded(file: string, maxBytes: number): BoundedRead {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = errnoCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return { ok: false, reason: 'absent', detail: `${file} does not exist` };
    return { ok: false, reason: 'unreadable', detail: `${file} cannot be opened (${code ?? 'error'})` };
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { ok: false, reason: 'not_file', detail: `${file} is not a regular file` };
    if (stat.size > maxBytes) return { ok: false, reason: 'too_large', detail: `${file} is over ${maxBytes} bytes` };
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(1 << 20, maxBytes + 1 - total));
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      total += n;
      if (total > maxBytes) return { ok: false, reason: 'too_large', detail: `${file} is over ${maxBytes} bytes` };
      chunks.push(n === chunk.length ? chunk : chunk.subarray(0, n));
    }
    return { ok: true, bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total) };
  } catch (error) {
    return { ok: false, reason: 'unreadable', detail: `${file} cannot be read (${errnoCode(error) ?? 'error'})` };
  } finally {
    closeSync(fd);
  }
}
