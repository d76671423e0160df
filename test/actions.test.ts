import { createPrivateKey } from 'node:crypto';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { checkSchema } from '../formats/schemas/check.ts';
import { actionDescriptorSchema, DESCRIPTOR_VERSION } from '../formats/schemas/actions.ts';
import { PROGRESS_SOURCES } from '../formats/supervision/modes.ts';
import { readPrivateKey, readPublicKey, writeKeyPair } from '../main/actions/keys.ts';
import { loadVerifiedAction, loadVerifiedDescriptor } from '../main/actions/load-descriptor.ts';
import { decodeSignature, sha256Hex, signatureFileOf, signatureText } from '../main/actions/signature.ts';
import { codeOf } from './helpers/thrown.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('actions');
const keys = writeKeyPair(join(root, 'keys'));
const otherKeys = writeKeyPair(join(root, 'other-keys'));

const review = { timeout_mode: 'admitted_progress_inactivity', progress: 'fd', cleanup_reserve_ms: 2000, post_provider_ms: 5000 };
const context = { timeout_mode: 'total_deadline', cleanup_reserve_ms: 0, post_provider_ms: 1 };
const DESCRIPTOR = { schema_version: 1, actions: { 'review.repository': review, 'context.repository': context } };

let counter = 0;
/** Writes `content` to a fresh file and, unless told otherwise, signs its exact bytes. */
function descriptorFile(content: string | Buffer, signWith: string | null = keys.key): string {
  const file = join(root, `d${counter++}.json`);
  writeFileSync(file, content);
  if (signWith !== null) writeFileSync(signatureFileOf(file), signatureText(readFileSync(file), readPrivateKey(signWith)));
  return file;
}


describe('actionDescriptorSchema', () => {
  const withSpec = (spec: Record<string, unknown>) => ({ schema_version: 1, actions: { a: spec } });
  test.each([
    ['the brief example', DESCRIPTOR, true],
    ['every progress source', { schema_version: 1, actions: Object.fromEntries(PROGRESS_SOURCES.map((p) => [p, { ...review, progress: p }])) }, true],
    ['unknown fields at each level', { ...DESCRIPTOR, note: 'x', actions: { a: { ...review, extra: [1] } } }, true],
    ['admitted progress without progress', withSpec({ ...review, progress: undefined }), false],
    ['admitted progress with an unknown source', withSpec({ ...review, progress: 'stdout-bytes' }), false],
    ['total deadline with a progress source', withSpec({ ...context, progress: 'fd' }), false],
    ['total deadline with progress null', withSpec({ ...context, progress: null }), false],
    ['an unknown timeout mode', withSpec({ ...context, timeout_mode: 'inactivity' }), false],
    ['no timeout mode', withSpec({ cleanup_reserve_ms: 0, post_provider_ms: 1 }), false],
    ['a negative cleanup reserve', withSpec({ ...context, cleanup_reserve_ms: -1 }), false],
    ['a fractional cleanup reserve', withSpec({ ...context, cleanup_reserve_ms: 1.5 }), false],
    ['a missing cleanup reserve', withSpec({ timeout_mode: 'total_deadline', post_provider_ms: 1 }), false],
    ['post_provider_ms 0', withSpec({ ...context, post_provider_ms: 0 }), false],
    ['post_provider_ms as a string', withSpec({ ...context, post_provider_ms: '5000' }), false],
    ['a budget setTimeout cannot hold', withSpec({ ...context, post_provider_ms: 2 ** 31 }), false],
    ['no actions', { schema_version: 1, actions: {} }, false],
    ['actions as an array', { schema_version: 1, actions: [review] }, false],
    ['an empty action name', { schema_version: 1, actions: { '': review } }, false],
    ['an action named __proto__', JSON.parse(`{"schema_version":1,"actions":{"__proto__":{"timeout_mode":"x"}}}`), false],
    ['an action named constructor', { schema_version: 1, actions: { constructor: { timeout_mode: 'x' } } }, false],
    ['no schema_version', { actions: DESCRIPTOR.actions }, false],
    ['schema_version 2', { ...DESCRIPTOR, schema_version: 2 }, false],
  ])('should judge %s valid=%s', (_name, value, valid) => {
    expect(checkSchema(actionDescriptorSchema, value, 'actions.json') === undefined).toBe(valid);
  });

  test('should read version 1', () => {
    expect(DESCRIPTOR_VERSION).toBe(1);
  });
});

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

describe('decodeSignature', () => {
  const good = signatureText(Buffer.from('x'), readPrivateKey(keys.key));
  test.each([
    ['the written line', good, true],
    ['without its newline', good.trimEnd(), true],
    ['with CRLF', `${good.trimEnd()}\r\n`, false],
    ['with a junk character Node would skip', `${good.slice(0, 10)}!${good.slice(10)}`, false],
    ['one character short', good.slice(1), false],
    ['url-safe alphabet', `${'-_'.repeat(43)}==`, false],
    // The last character carries 2 signature bits and 4 zero bits; setting one decodes
    // to the same bytes under Node, so only the re-encoding check can refuse it.
    ['a padding bit set (a second spelling)', `${good.slice(0, 85)}${B64[B64.indexOf(good[85]!) | 1]}==`, false],
    ['empty', '', false],
  ])('should decode %s: %s', (_name, text, ok) => {
    expect(decodeSignature(text) !== undefined).toBe(ok);
  });
});

describe('writeKeyPair', () => {
  test('should write a PKCS#8 key 0600 and an SPKI key 0644 that belong together', () => {
    expect(statSync(keys.key).mode & 0o777).toBe(0o600);
    expect(statSync(keys.pub).mode & 0o777).toBe(0o644);
    expect(readFileSync(keys.key, 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(readFileSync(keys.pub, 'utf8')).toMatch(/^-----BEGIN PUBLIC KEY-----\n/);
    expect(createPrivateKey(readFileSync(keys.key)).asymmetricKeyType).toBe('ed25519');
    expect(readPublicKey(keys.pub).asymmetricKeyType).toBe('ed25519');
    expect(keys.pubSha256).toMatch(/^[0-9a-f]{64}$/);
  });

  test('should refuse to replace either existing key file and leave it as it was', () => {
    const before = readFileSync(keys.key);
    expect(codeOf(() => writeKeyPair(join(root, 'keys')))).toBe('KEYS_EXIST');
    expect(readFileSync(keys.key)).toEqual(before);
    const pubOnly = join(root, 'pub-only');
    mkdirSync(pubOnly);
    writeFileSync(join(pubOnly, 'actions.pub'), 'kept');
    expect(codeOf(() => writeKeyPair(pubOnly))).toBe('KEYS_EXIST');
    expect(readFileSync(join(pubOnly, 'actions.pub'), 'utf8')).toBe('kept');
    expect(() => statSync(join(pubOnly, 'actions.key'))).toThrow();
  });
});

describe('loadVerifiedAction', () => {
  const text = JSON.stringify(DESCRIPTOR);

  test('should return the spec and the sha256 of the exact bytes', () => {
    const file = descriptorFile(text);
    expect(loadVerifiedAction(file, keys.pub, 'review.repository')).toEqual({ spec: review, sha256: sha256Hex(Buffer.from(text)) });
    expect(loadVerifiedAction(file, keys.pub, 'context.repository').spec).toEqual(context);
    expect(loadVerifiedDescriptor(file, keys.pub).descriptor).toEqual(DESCRIPTOR);
  });

  const sigOf = (file: string) => signatureFileOf(file);
  test.each<[string, () => [file: string, trust: string, action?: string]]>([
    ['a missing file', () => [join(root, 'absent.json'), keys.pub]],
    ['a directory', () => [root, keys.pub]],
    ['a missing .sig (unsigned)', () => [descriptorFile(text, null), keys.pub]],
    ['an empty .sig', () => { const f = descriptorFile(text); writeFileSync(sigOf(f), ''); return [f, keys.pub]; }],
    ['a .sig that is not base64', () => { const f = descriptorFile(text); writeFileSync(sigOf(f), 'not a signature\n'); return [f, keys.pub]; }],
    ['a .sig with a stray character', () => {
      const f = descriptorFile(text);
      const sig = readFileSync(sigOf(f), 'utf8');
      writeFileSync(sigOf(f), `*${sig}`);
      return [f, keys.pub];
    }],
    ['a signature from another keygen', () => [descriptorFile(text, otherKeys.key), keys.pub]],
    ['a trusted key from another keygen', () => [descriptorFile(text), otherKeys.pub]],
    ['a one-byte tamper', () => {
      const f = descriptorFile(text);
      const bytes = readFileSync(f);
      bytes[bytes.indexOf('2000')] = '3'.charCodeAt(0);
      writeFileSync(f, bytes);
      return [f, keys.pub];
    }],
    ['a byte appended', () => { const f = descriptorFile(text); writeFileSync(f, `${text}\n`); return [f, keys.pub]; }],
    ['signed bad JSON', () => [descriptorFile('{"schema_version":1,'), keys.pub]],
    ['signed invalid UTF-8', () => [descriptorFile(Buffer.from([0x7b, 0xff, 0x7d])), keys.pub]],
    ['a signed schema failure', () => [descriptorFile(JSON.stringify({ schema_version: 1, actions: { a: { ...context, progress: 'fd' } } })), keys.pub, 'a']],
    ['a signed wrong version', () => [descriptorFile(JSON.stringify({ ...DESCRIPTOR, schema_version: 2 })), keys.pub]],
    ['a signed missing version', () => [descriptorFile(JSON.stringify({ actions: DESCRIPTOR.actions })), keys.pub]],
    ['a signed non-object', () => [descriptorFile('[1]'), keys.pub]],
  ])('should throw DESCRIPTOR_INVALID for %s', (_name, make) => {
    const [file, trust, action = 'review.repository'] = make();
    expect(codeOf(() => loadVerifiedAction(file, trust, action))).toBe('DESCRIPTOR_INVALID');
  });

  // A wrong trust path or action name is the crew file's (or the flag's) to correct, not
  // the descriptor's: each has its own code, whose fix names where it was written.
  test.each<[string, () => [file: string, trust: string, action?: string], string]>([
    ['a missing trusted key', () => [descriptorFile(text), join(root, 'absent.pub')], 'TRUST_KEY_UNUSABLE'],
    ['a private key given as the trusted key', () => [descriptorFile(text), keys.key], 'TRUST_KEY_UNUSABLE'],
    ['an unknown action name', () => [descriptorFile(text), keys.pub, 'governance.repository'], 'ACTION_UNKNOWN'],
    ['an inherited name', () => [descriptorFile(text), keys.pub, 'toString'], 'ACTION_UNKNOWN'],
    ['__proto__ as the action', () => [descriptorFile(text), keys.pub, '__proto__'], 'ACTION_UNKNOWN'],
  ])('should throw its own code for %s: %s', (_name, make, code) => {
    const [file, trust, action = 'review.repository'] = make();
    expect(codeOf(() => loadVerifiedAction(file, trust, action))).toBe(code);
  });

  test('should list the actions the descriptor has when the name is unknown', () => {
    expect(() => loadVerifiedAction(descriptorFile(text), keys.pub, 'reveiw.repository')).toThrow(/lists "review\.repository", "context\.repository"/);
  });
});
