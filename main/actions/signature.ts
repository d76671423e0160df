import { createHash, sign, verify, type KeyObject } from 'node:crypto';

/** The detached signature of FILE lives beside it as FILE.sig. */
export function signatureFileOf(file: string): string {
  return `${file}.sig`;
}

/** sha256 hex of exact bytes: the identity a verified descriptor is reported by. */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * The content of a .sig file for `bytes`: the Ed25519 signature, base64 on one line.
 * Ed25519 takes no digest name (`null`): it hashes the message itself.
 */
export function signatureText(bytes: Uint8Array, privateKey: KeyObject): string {
  return `${sign(null, bytes, privateKey).toString('base64')}\n`;
}

const ED25519_SIGNATURE_BYTES = 64;
// 64 bytes are exactly 88 base64 characters, the last two padding.
const SIGNATURE_LINE = /^[A-Za-z0-9+/]{86}==\n?$/;

/**
 * Decodes a .sig file's text strictly, or returns undefined. Node's base64 decoder
 * skips characters it does not know, so "looks like base64" is checked by pattern and
 * by re-encoding: a .sig file has exactly one spelling of exactly one signature.
 */
export function decodeSignature(text: string): Buffer | undefined {
  if (!SIGNATURE_LINE.test(text)) return undefined;
  const encoded = text.endsWith('\n') ? text.slice(0, -1) : text;
  const signature = Buffer.from(encoded, 'base64');
  if (signature.length !== ED25519_SIGNATURE_BYTES || signature.toString('base64') !== encoded) return undefined;
  return signature;
}

/** Whether `signature` is the trusted key's Ed25519 signature over exactly `bytes`. */
export function verifySignature(bytes: Uint8Array, signature: Uint8Array, publicKey: KeyObject): boolean {
  try {
    return verify(null, bytes, publicKey, signature);
  } catch {
    // A key of another type throws rather than answering: that is a "no" as well.
    return false;
  }
}
