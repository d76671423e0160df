import { createHash } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { codesOf, ensureBuilt, laneward } from './helpers/cli.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('actions-cli');
beforeAll(ensureBuilt);

const DESCRIPTOR =
  '{"schema_version":1,"actions":{"review.repository":{"timeout_mode":"admitted_progress_inactivity","progress":"fd","cleanup_reserve_ms":2000,"post_provider_ms":5000}}}';
const sha256 = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('hex');

let counter = 0;
function keygen(): { key: string; pub: string } {
  const dir = join(root, `keys${counter++}`);
  const result = laneward(['actions', 'keygen', '--out', dir]);
  expect(result.code).toBe(0);
  return { key: join(dir, 'actions.key'), pub: join(dir, 'actions.pub') };
}

function descriptor(content = DESCRIPTOR): string {
  const file = join(root, `d${counter++}.json`);
  writeFileSync(file, content);
  return file;
}

function signed(keys: { key: string }, content = DESCRIPTOR): string {
  const file = descriptor(content);
  expect(laneward(['actions', 'sign', file, '--key', keys.key]).code).toBe(0);
  return file;
}

describe('laneward actions keygen', () => {
  test('should write the private key 0600 and the public key 0644, creating the directory', () => {
    const dir = join(root, 'new', 'nested');
    const result = laneward(['actions', 'keygen', '--out', dir]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^ACTIONS_KEYGEN: key=\S+actions\.key pub=\S+actions\.pub pub_sha256=[0-9a-f]{64}\n$/);
    expect(statSync(join(dir, 'actions.key')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'actions.pub')).mode & 0o777).toBe(0o644);
  });

  test('should refuse with exit 3 to overwrite existing key files and leave them unchanged', () => {
    const keys = keygen();
    const before = [readFileSync(keys.key), readFileSync(keys.pub)];
    const again = laneward(['actions', 'keygen', '--out', join(keys.key, '..')]);
    expect(again.code).toBe(3);
    expect(codesOf(again.stderr)).toEqual(['KEYS_EXIST']);
    expect(again.stderr).toMatch(/; fix: keep using the keys there \(sign with --key DIR\/actions\.key\), or pass laneward actions keygen another --out directory \(KEYS_EXIST\)\n$/);
    expect(again.stdout).toBe('');
    expect([readFileSync(keys.key), readFileSync(keys.pub)]).toEqual(before);
  });

  test('should print one JSON object with --json, on success and on refusal', () => {
    const dir = join(root, 'json-keys');
    const first = laneward(['actions', 'keygen', '--out', dir, '--json']);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({
      generated: true,
      key: join(dir, 'actions.key'),
      pub: join(dir, 'actions.pub'),
      pubSha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const second = laneward(['actions', 'keygen', '--out', dir, '--json']);
    expect(second.code).toBe(3);
    expect(JSON.parse(second.stdout)).toEqual({
      generated: false,
      code: 'KEYS_EXIST',
      message: 'a key file already exists there and is never replaced',
      path: join(dir, 'actions.key'),
      fix: 'keep using the keys there (sign with --key DIR/actions.key), or pass laneward actions keygen another --out directory',
    });
  });
});

describe('laneward actions sign and verify', () => {
  // Made in a hook, not at collection time: the bundle is only built by then.
  let keys = { key: '', pub: '' };
  beforeAll(() => {
    keys = keygen();
  });

  test('should round-trip: sign writes FILE.sig, verify prints ACTIONS_VERIFIED and exits 0', () => {
    const file = descriptor();
    const sign = laneward(['actions', 'sign', file, '--key', keys.key]);
    expect(sign).toEqual({ code: 0, stdout: `ACTIONS_SIGNED: file=${file} sig=${file}.sig sha256=${sha256(DESCRIPTOR)}\n`, stderr: '' });
    expect(readFileSync(`${file}.sig`, 'utf8')).toMatch(/^[A-Za-z0-9+/]{86}==\n$/);
    expect(laneward(['actions', 'verify', file, '--trust', keys.pub])).toEqual({
      code: 0,
      stdout: `ACTIONS_VERIFIED: actions=1 sha256=${sha256(DESCRIPTOR)}\n`,
      stderr: '',
    });
  });

  test('should replace an older signature when signing again', () => {
    const file = signed(keys);
    const edited = DESCRIPTOR.replace('2000', '2500');
    writeFileSync(file, edited);
    expect(laneward(['actions', 'verify', file, '--trust', keys.pub]).code).toBe(3);
    expect(laneward(['actions', 'sign', file, '--key', keys.key]).code).toBe(0);
    expect(laneward(['actions', 'verify', file, '--trust', keys.pub]).stdout).toBe(`ACTIONS_VERIFIED: actions=1 sha256=${sha256(edited)}\n`);
  });

  test('should print one JSON object with --json for sign and verify', () => {
    const file = descriptor();
    const sign = laneward(['actions', 'sign', file, '--key', keys.key, '--json']);
    expect(sign.code).toBe(0);
    expect(JSON.parse(sign.stdout)).toEqual({ signed: true, file, sig: `${file}.sig`, sha256: sha256(DESCRIPTOR) });
    const verify = laneward(['actions', 'verify', file, '--trust', keys.pub, '--json']);
    expect(verify.code).toBe(0);
    expect(JSON.parse(verify.stdout)).toEqual({ verified: true, file, actions: 1, names: ['review.repository'], sha256: sha256(DESCRIPTOR) });
  });

  const tamper = (file: string) => writeFileSync(file, DESCRIPTOR.replace('"fd"', '"fe"'));
  test.each<[string, () => [file: string, trust: string]]>([
    ['a tampered file', () => { const f = signed(keys); tamper(f); return [f, keys.pub]; }],
    ['an unsigned file', () => [descriptor(), keys.pub]],
    ['a signed wrong version', () => [signed(keys, DESCRIPTOR.replace('"schema_version":1', '"schema_version":2')), keys.pub]],
    ['a signed schema failure', () => [signed(keys, DESCRIPTOR.replace('"progress":"fd",', '')), keys.pub]],
    ['a signed non-JSON file', () => [signed(keys, 'timeout_mode=total_deadline'), keys.pub]],
    ['a key from another keygen', () => [signed(keys), keygen().pub]],
  ])('should refuse %s with exit 3 and DESCRIPTOR_INVALID', (_name, make) => {
    const [file, trust] = make();
    const text = laneward(['actions', 'verify', file, '--trust', trust]);
    expect(text.code).toBe(3);
    expect(text.stdout).toBe('');
    expect(codesOf(text.stderr)).toEqual(['DESCRIPTOR_INVALID']);
    const json = laneward(['actions', 'verify', file, '--trust', trust, '--json']);
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout)).toMatchObject({ verified: false, code: 'DESCRIPTOR_INVALID' });
  });

  test('should fail sign with exit 1 and IO_ERROR for a public key given as --key', () => {
    const result = laneward(['actions', 'sign', descriptor(), '--key', keys.pub]);
    expect(result.code).toBe(1);
    expect(codesOf(result.stderr)).toEqual(['IO_ERROR']);
  });
});

describe('laneward actions usage', () => {
  test.each([
    [['actions', 'keygen']],
    [['actions', 'keygen', '--out', '']],
    [['actions', 'keygen', '--out', root, 'extra']],
    [['actions', 'sign', '--key', 'k']],
    [['actions', 'sign', 'a.json']],
    [['actions', 'sign', 'a.json', 'b.json', '--key', 'k']],
    [['actions', 'verify', 'a.json']],
    [['actions', 'verify', 'a.json', '--trust', 'p', '--bogus']],
    [['actions', 'verify', 'a.json', '--trust']],
    [['actions', 'frobnicate']],
  ])('should exit 2 with USAGE for %j', (args) => {
    const result = laneward(args);
    expect(result.code).toBe(2);
    expect(codesOf(result.stderr)).toEqual(['USAGE']);
  });

  test.each([[['actions', '--help']], [['actions', 'keygen', '--help']], [['actions', 'sign', '-h']], [['actions', 'verify', '--help']]])(
    'should print the help and exit 0 for %j',
    (args) => {
      const result = laneward(args);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^usage: laneward actions <keygen\|sign\|verify>/);
    },
  );
});
