import type { KeyObject } from 'node:crypto';
import { LanewardError } from '../../formats/codes/error.ts';
import { decodeSignature, signatureText, verifySignature } from '../actions/signature.ts';

/**
 * What travels as a job's data: the body as the exact JSON text that was signed, and the
 * Ed25519 signature over its UTF-8 bytes by the enqueuer's key. A worker runs nothing a
 * key it trusts did not sign: the body names commands (a lane's runners), so a job anyone
 * with access to Redis could write must not be able to start one.
 */
export interface SignedJob {
  readonly v: 1;
  readonly body: string;
  readonly signature: string;
}

/** Signs `body` (any JSON value) as a job's data. */
export function signJob(body: unknown, key: KeyObject): SignedJob {
  const text = JSON.stringify(body);
  return { v: 1, body: text, signature: signatureText(Buffer.from(text, 'utf8'), key).trimEnd() };
}

/** Bounds a worker holds a job to before parsing it. */
const MAX_BODY_CHARS = 64 * 1024 * 1024;

/**
 * The body of a job a trusted key signed, parsed; JOB_INVALID for anything else (not the
 * envelope, too large, a signature that does not decode or verify, a body that is not
 * JSON). The body's own shape is the caller's to check.
 */
export function openJob(data: unknown, trust: KeyObject): unknown {
  const refuse = (why: string) => new LanewardError('JOB_INVALID', why);
  if (typeof data !== 'object' || data === null) throw refuse('the job data is not an object');
  const { v, body, signature } = data as Record<string, unknown>;
  if (v !== 1) throw refuse(`the job's envelope version is ${JSON.stringify(v) ?? 'missing'}, not 1`);
  if (typeof body !== 'string' || typeof signature !== 'string') throw refuse('the job carries no signed body');
  if (body.length > MAX_BODY_CHARS) throw refuse(`the job body is ${body.length} characters, over ${MAX_BODY_CHARS}`);
  const decoded = decodeSignature(signature);
  if (decoded === undefined) throw refuse('the job signature is not one base64 Ed25519 signature');
  if (!verifySignature(Buffer.from(body, 'utf8'), decoded, trust)) throw refuse('the job is not signed by the key this worker trusts');
  try {
    return JSON.parse(body) as unknown;
  } catch {
    throw refuse('the signed job body is not JSON');
  }
}
