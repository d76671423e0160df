import { createHash } from 'node:crypto';

/** The hex sha256 of bytes or of a string's UTF-8. */
export function sha256(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}
