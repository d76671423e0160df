import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
} from 'node:crypto';
import { closeSync, fchmodSync, fsyncSync, linkSync, openSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { errnoCode, LanewardError, toError } from '../../formats/codes/error.ts';
import { readBounded } from '../fs/read-bounded.ts';
import { makeDirs } from '../fs/make-dirs.ts';

/** A PEM key is a few hundred bytes; anything far larger is not a key file. */
const MAX_KEY_BYTES = 64 * 1024;

/** The file names `actions keygen` writes inside its output directory. */
export const KEY_FILE = 'actions.key';
export const PUB_FILE = 'actions.pub';

/** What keygen wrote, and the fingerprint to pin the public key by. */
export interface KeyPairFiles {
  readonly key: string;
  readonly pub: string;
  /** sha256 hex of the public key's SPKI DER bytes. */
  readonly pubSha256: string;
}

/**
 * Generates an Ed25519 pair into `dir` (created 0700 if absent): actions.key as PKCS#8
 * PEM (0600) and actions.pub as SPKI PEM (0644). An existing key file is never replaced:
 * that is KEYS_EXIST, a refusal, not a failure to write.
 */
export function writeKeyPair(dir: string): KeyPairFiles {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const key = join(dir, KEY_FILE);
  const pub = join(dir, PUB_FILE);
  makeDirs(dir, { mode: 0o700 });
  writeNewFile(key, privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), 0o600);
  try {
    writeNewFile(pub, publicKey.export({ type: 'spki', format: 'pem' }).toString(), 0o644);
  } catch (error) {
    // Half a pair is worse than none: the private key just written has no public half.
    rmSync(key, { force: true });
    throw error;
  }
  return { key, pub, pubSha256: publicKeyFingerprint(publicKey) };
}

/** sha256 hex of a public key's SPKI DER encoding (independent of PEM line wrapping). */
export function publicKeyFingerprint(key: KeyObject): string {
  return createHash('sha256').update(key.export({ type: 'spki', format: 'der' })).digest('hex');
}

/** Reads an Ed25519 private key (PEM); anything else is an IO_ERROR naming the file. */
export function readPrivateKey(file: string): KeyObject {
  const text = readKeyText(file);
  try {
    const key = createPrivateKey(text);
    if (key.asymmetricKeyType === 'ed25519') return key;
  } catch {
    // Reported below with the one message for every unusable key file.
  }
  throw new LanewardError('IO_ERROR', 'not an Ed25519 private key (PKCS#8 PEM)', { path: file });
}

/**
 * Reads an Ed25519 public key (SPKI PEM). A private key file is refused even though a
 * public key could be derived from it: a trust anchor must never be the signing secret.
 */
export function readPublicKey(file: string): KeyObject {
  const text = readKeyText(file);
  if (text.trimStart().startsWith('-----BEGIN PUBLIC KEY-----')) {
    try {
      const key = createPublicKey(text);
      if (key.asymmetricKeyType === 'ed25519') return key;
    } catch {
      // Reported below.
    }
  }
  throw new LanewardError('IO_ERROR', 'not an Ed25519 public key (SPKI PEM)', { path: file });
}

/** Through the bounded reader: a FIFO or /dev/zero at the path is refused, never read. */
function readKeyText(file: string): string {
  try {
    return readBounded(file, MAX_KEY_BYTES).bytes.toString('utf8');
  } catch (error) {
    throw new LanewardError('IO_ERROR', `cannot read key file: it ${toError(error).message}`, { path: file, cause: error });
  }
}

/**
 * Writes a file that must not exist yet, atomically: the content goes to a temp file
 * created with its final mode (no moment where a private key is readable by others),
 * is synced, then hard-linked to its name. link(2) fails with EEXIST rather than
 * replacing, so two keygens racing cannot overwrite each other; rename(2) would.
 */
function writeNewFile(file: string, content: string, mode: number): void {
  const temp = join(dirname(file), `.${basename(file)}.${process.pid}.${Date.now()}.tmp`);
  let created = false;
  try {
    const fd = openSync(temp, 'wx', mode);
    created = true;
    try {
      fchmodSync(fd, mode); // the umask may have narrowed the mode passed to open
      writeSync(fd, content);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    linkSync(temp, file);
    syncDir(dirname(file));
  } catch (error) {
    if (created && errnoCode(error) === 'EEXIST') throw new LanewardError('KEYS_EXIST', 'a key file already exists there and is never replaced', { path: file, cause: error });
    throw new LanewardError('IO_ERROR', toError(error).message, { path: file, cause: error });
  } finally {
    // Only our own temp file: one we failed to create may belong to someone else.
    if (created) rmSync(temp, { force: true });
  }
}

/** Makes the new directory entry durable, as rename-based writes do. */
function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
