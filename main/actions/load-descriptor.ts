import { basename } from 'node:path';
import { isLanewardError, LanewardError, toError } from '../../formats/codes/error.ts';
import { checkSchema } from '../../formats/schemas/check.ts';
import { jsonSyntaxText, parseJson } from '../../formats/text/json-text.ts';
import {
  actionDescriptorSchema,
  DESCRIPTOR_VERSION,
  type ActionDescriptor,
  type ActionSpec,
} from '../../formats/schemas/actions.ts';
import { isBoundedReadError, readBounded } from '../fs/read-bounded.ts';
import { readPublicKey } from './keys.ts';
import { decodeSignature, sha256Hex, signatureFileOf, verifySignature } from './signature.ts';

// A descriptor is a few hundred bytes; a cap keeps a wrong path (a log, a device) from
// being read whole into memory before the signature check refuses it.
const MAX_FILE_BYTES = 1024 * 1024;

/** A descriptor whose signature, schema and version were all checked on the same bytes. */
export interface VerifiedDescriptor {
  readonly descriptor: ActionDescriptor;
  /** sha256 hex of the exact file bytes that were verified and parsed. */
  readonly sha256: string;
}

/** The codes a descriptor can be refused with: nothing is spawned under any of them. */
export const DESCRIPTOR_REFUSALS = ['DESCRIPTOR_INVALID', 'TRUST_KEY_UNUSABLE', 'ACTION_UNKNOWN'] as const;
export type DescriptorRefusal = (typeof DESCRIPTOR_REFUSALS)[number];

/** Whether `error` is a descriptor's refusal (its file, its trust key or its action name). */
export function isDescriptorRefusal(error: unknown): error is LanewardError & { readonly code: DescriptorRefusal } {
  return isLanewardError(error) && (DESCRIPTOR_REFUSALS as readonly string[]).includes(error.code);
}

const invalid = (message: string, path: string, cause?: unknown) =>
  new LanewardError('DESCRIPTOR_INVALID', message, cause === undefined ? { path } : { path, cause });

/**
 * Reads `file` once, checks FILE.sig over those exact bytes with the trusted public key
 * (`trustPub`, an SPKI PEM file), then parses the same bytes and checks the schema and
 * version. Every failure is DESCRIPTOR_INVALID, but an unreadable trust key, which is
 * TRUST_KEY_UNUSABLE (exit 3 as well): whoever asks must fail closed, never fall back to
 * a default timeout mode.
 */
export function loadVerifiedDescriptor(file: string, trustPub: string): VerifiedDescriptor {
  const bytes = readOnce(file, 'descriptor');
  const sigFile = signatureFileOf(file);
  const signature = decodeSignature(readOnce(sigFile, 'signature file').toString('latin1'));
  if (signature === undefined) throw invalid('the signature file is not one base64 Ed25519 signature', sigFile);
  let publicKey;
  try {
    publicKey = readPublicKey(trustPub);
  } catch (error) {
    // Its own code: the fix is the trust path, not the descriptor's signature.
    throw new LanewardError('TRUST_KEY_UNUSABLE', `the trusted public key is unusable: ${toError(error).message}`, { path: trustPub, cause: error });
  }
  // Verify before parsing: unauthenticated bytes never reach the JSON parser.
  if (!verifySignature(bytes, signature, publicKey)) {
    throw invalid('the signature does not match the file bytes under the trusted key', file);
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (error) {
    throw invalid('not UTF-8 text', file, error);
  }
  const json = parseJson(text);
  if (!json.ok) throw invalid(`not one JSON document (${jsonSyntaxText(json)})`, file);
  const value = json.value;
  // The version is checked first and on its own: a descriptor from another version may
  // have another shape, and "newer writer" must not read as "broken fields".
  const version = (value as { schema_version?: unknown } | null)?.schema_version;
  if (typeof value === 'object' && value !== null && !Array.isArray(value) && version !== DESCRIPTOR_VERSION) {
    throw invalid(`schema_version ${JSON.stringify(version) ?? 'absent'} is not ${DESCRIPTOR_VERSION}`, file);
  }
  const issues = checkSchema(actionDescriptorSchema, value, basename(file));
  if (issues !== undefined) {
    throw invalid(issues.map((found) => `${found.path}: ${found.message}`).join('; '), file);
  }
  return { descriptor: value as ActionDescriptor, sha256: sha256Hex(bytes) };
}

/**
 * The verified spec of one action, for a supervisor to call before anything is spawned.
 * Throws DESCRIPTOR_INVALID for any problem with the file or its signature,
 * TRUST_KEY_UNUSABLE for a trust key that is not one, ACTION_UNKNOWN for a name the
 * descriptor does not list.
 */
export function loadVerifiedAction(file: string, trustPub: string, action: string): { spec: ActionSpec; sha256: string } {
  const { descriptor, sha256 } = loadVerifiedDescriptor(file, trustPub);
  // Own keys only: "toString" or "__proto__" must not resolve through the prototype.
  if (!Object.hasOwn(descriptor.actions, action)) {
    const names = Object.keys(descriptor.actions);
    throw new LanewardError('ACTION_UNKNOWN', `no action named ${JSON.stringify(action)} in the descriptor, which lists ${names.map((n) => JSON.stringify(n)).join(', ')}`, { path: file });
  }
  return { spec: descriptor.actions[action]!, sha256 };
}

/** Reads a descriptor or signature through the bounded reader (regular file, capped). */
function readOnce(file: string, what: string): Buffer {
  try {
    return readBounded(file, MAX_FILE_BYTES).bytes;
  } catch (error) {
    if (what === 'signature file' && isBoundedReadError(error) && error.problem === 'absent') {
      throw invalid('the descriptor is unsigned (no signature file)', file, error);
    }
    throw invalid(`the ${what} ${toError(error).message}`, file, error);
  }
}
