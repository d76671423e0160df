import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readPrivateKey, writeKeyPair } from '../../main/actions/keys.ts';
import { signatureFileOf, signatureText } from '../../main/actions/signature.ts';

export interface SignedActions {
  /** The signed descriptor (its signature beside it, `<file>.sig`). */
  readonly file: string;
  /** The public key to pass as `--trust`. */
  readonly trust: string;
  /** The private key that signed it. */
  readonly key: string;
}

/**
 * Makes a key pair under `<root>/keys` and a descriptor `<root>/actions.json` of
 * `{ schema_version: 1, actions }` (two-space JSON, one trailing newline), signed with it.
 * In-process, with the functions `actions keygen` and `actions sign` run: these are the
 * fixtures of other tests, and two CLI starts each cost more than the test's own work
 * (the commands' output is pinned in actions-cli.test.ts).
 */
export function signedActions(root: string, actions: Record<string, unknown>): SignedActions {
  const { key, pub } = writeKeyPair(join(root, 'keys'));
  const file = join(root, 'actions.json');
  writeFileSync(file, `${JSON.stringify({ schema_version: 1, actions }, null, 2)}\n`);
  writeFileSync(signatureFileOf(file), signatureText(readFileSync(file), readPrivateKey(key)));
  return { file, trust: pub, key };
}
