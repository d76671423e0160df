import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { MAX_ACTION_BODY_BYTES, TOKEN_HEADER } from '../../formats/console/actions.ts';

// The checks a request that changes the crew passes before it is read: loopback alone is
// not enough (any local process, and any page a browser on this machine opens, reaches
// 127.0.0.1). The token is the secret the crew printed with its URL; the Origin check stops
// a page of another site from using a browser that holds it.

/** A fresh console token: 32 random bytes (256 bits), base64url. */
export function mintToken(): string {
  return randomBytes(32).toString('base64url');
}

/** A refusal: the code, the HTTP status it is sent with and what was wrong. */
export interface Refusal {
  readonly code: 'CONSOLE_TOKEN_MISSING' | 'CONSOLE_TOKEN_WRONG' | 'CONSOLE_ORIGIN_REFUSED' | 'CONSOLE_BODY_INVALID';
  readonly status: number;
  readonly detail: string;
}

/**
 * Why the request may not act, or null. The Origin must be present and be exactly the
 * origin the Host names (a loopback Host, checked before): the page that sends it was
 * served by this console, through whatever port the browser reached it on (an SSH forward
 * too), and a page served anywhere else, another local port included, is refused whatever
 * it sends. The token is compared in constant time (both sides hashed first, so their
 * lengths agree too).
 */
export function refuseAction(req: IncomingMessage, token: string): Refusal | null {
  const origin = req.headers.origin;
  const host = req.headers.host ?? '';
  if (origin === undefined || origin === '') return { code: 'CONSOLE_ORIGIN_REFUSED', status: 403, detail: 'no Origin header' };
  if (origin !== `http://${host}`) return { code: 'CONSOLE_ORIGIN_REFUSED', status: 403, detail: `Origin ${JSON.stringify(origin.slice(0, 200))} is not this console's` };
  const given = req.headers[TOKEN_HEADER];
  if (typeof given !== 'string' || given === '') return { code: 'CONSOLE_TOKEN_MISSING', status: 401, detail: `no ${TOKEN_HEADER} header` };
  if (!sameSecret(given, token)) return { code: 'CONSOLE_TOKEN_WRONG', status: 403, detail: `the ${TOKEN_HEADER} header is not this console's token` };
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') return { code: 'CONSOLE_BODY_INVALID', status: 415, detail: `Content-Type ${JSON.stringify(type)}, not application/json` };
  const length = Number(req.headers['content-length'] ?? '0');
  if (Number.isFinite(length) && length > MAX_ACTION_BODY_BYTES) return { code: 'CONSOLE_BODY_INVALID', status: 413, detail: `a body of ${length} bytes (at most ${MAX_ACTION_BODY_BYTES})` };
  return null;
}

function sameSecret(given: string, token: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(token));
}

/**
 * The request's body as text, at most MAX_ACTION_BODY_BYTES: a body that grows past the
 * bound (a chunked one names no length) resolves null and is not read further.
 */
export function readBoundedBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let done = false;
    const finish = (value: string | null) => {
      if (done) return;
      done = true;
      resolve(value);
    };
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > MAX_ACTION_BODY_BYTES) {
        // Stop reading: the rest is never buffered; the reply closes the connection.
        req.pause();
        finish(null);
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => finish(Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => finish(null));
  });
}
