import { brotliCompressSync, constants, createBrotliCompress, createGzip, gzipSync, type BrotliCompress, type Gzip } from 'node:zlib';

/** A content coding the console answers with. */
export type Coding = 'br' | 'gzip';

// Brotli at a low quality: a 5,000-lane snapshot is compressed on the crew's own event loop
// at every fetch, and quality 11 (the default) costs tens of times more for a few percent.
const BROTLI_QUALITY = 4;

/**
 * The coding to answer a request's Accept-Encoding with: br, else gzip, else none. A
 * coding given `q=0` is refused, as `*` stands for any coding not named.
 */
export function chooseCoding(header: string | string[] | undefined): Coding | null {
  const text = Array.isArray(header) ? header.join(',') : (header ?? '');
  const weights = new Map<string, number>();
  for (const part of text.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (name === undefined || name === '') continue;
    const q = params.map((p) => /^\s*q\s*=\s*([0-9.]+)\s*$/.exec(p)).find((m) => m !== null);
    weights.set(name, q == null ? 1 : Number(q[1]));
  }
  const accepts = (coding: Coding) => (weights.get(coding) ?? weights.get('*') ?? 0) > 0;
  return accepts('br') ? 'br' : accepts('gzip') ? 'gzip' : null;
}

/** `body` in `coding`. */
export function compressBody(body: string, coding: Coding): Buffer {
  return coding === 'br' ? brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } }) : gzipSync(body);
}

/** A stream that compresses in `coding`; its flush() pushes out all written so far, so each event reaches the reader whole. */
export function codingStream(coding: Coding): Gzip | BrotliCompress {
  return coding === 'br' ? createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } }) : createGzip();
}
