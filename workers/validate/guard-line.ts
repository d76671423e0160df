import { streamFile } from './file-stream.ts';

/** The line an unattended run's review-record.md must hold. */
export const GUARD_TOKEN = Buffer.from('GUARD_NOT_INSTALLED');

/** Hashes a file while looking for `token`, which may straddle two chunks. */
export function scanFor(file: string, token: Buffer): { sha256: string; seen: boolean } {
  let seen = false;
  let tail = Buffer.alloc(0);
  const { sha256 } = streamFile(file, (chunk) => {
    if (seen) return;
    const window = tail.length === 0 ? chunk : Buffer.concat([tail, chunk]);
    if (window.indexOf(token) !== -1) seen = true;
    else tail = Buffer.from(window.subarray(Math.max(0, window.length - token.length + 1)));
  });
  return { sha256, seen };
}
