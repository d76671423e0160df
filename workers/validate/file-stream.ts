import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

const CHUNK_BYTES = 1024 * 1024;
// Hint: one buffer per thread; reads are synchronous, so it is never shared by two streams.
let shared: Buffer | undefined;

export interface StreamedFile {
  readonly bytes: number;
  readonly sha256: string;
}

/**
 * Reads a regular file in chunks, hashing every byte, and hands each chunk on. Never
 * holds the file whole. Opened read-only and non-blocking so a FIFO swapped in after the
 * caller's stat cannot hang the validator. The chunk is only valid during the callback.
 */
export function streamFile(path: string, onChunk?: (chunk: Buffer) => void): StreamedFile {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    if (!fstatSync(fd).isFile()) throw Object.assign(new Error('not a regular file'), { code: 'EISDIR' });
    const hash = createHash('sha256');
    const buffer = (shared ??= Buffer.allocUnsafe(CHUNK_BYTES));
    let bytes = 0;
    for (;;) {
      const n = readSync(fd, buffer, 0, CHUNK_BYTES, null);
      if (n === 0) break;
      const chunk = n === CHUNK_BYTES ? buffer : buffer.subarray(0, n);
      hash.update(chunk);
      onChunk?.(chunk);
      bytes += n;
    }
    return { bytes, sha256: hash.digest('hex') };
  } finally {
    closeSync(fd);
  }
}
