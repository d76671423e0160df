import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { laneward } from './cli.ts';

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
 */
export function signedActions(root: string, actions: Record<string, unknown>): SignedActions {
  const keys = join(root, 'keys');
  expect(laneward(['actions', 'keygen', '--out', keys]).code).toBe(0);
  const key = join(keys, 'actions.key');
  const file = join(root, 'actions.json');
  writeFileSync(file, `${JSON.stringify({ schema_version: 1, actions }, null, 2)}\n`);
  expect(laneward(['actions', 'sign', file, '--key', key]).code).toBe(0);
  return { file, trust: join(keys, 'actions.pub'), key };
}
