import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, test } from 'vitest';
import { BUNDLE, ensureBuilt } from './helpers/cli.ts';

beforeAll(() => ensureBuilt());

describe('dist/laneward.mjs', () => {
  // A static import of an external package runs at every start of every command: the
  // store's native addon and the pool load on first use only (deadline, lease, gate and a
  // single validate need neither, and lease's fd accounting depends on it).
  test('should import no package but node built-ins at start-up', () => {
    const bundle = readFileSync(BUNDLE, 'utf8');
    const statics = [...bundle.matchAll(/import\s*(?:\{[^}]*\}|\*\s+as\s+\w+|\w+)\s*from\s*"([^"]+)"/g)].map((m) => m[1]);
    expect(statics.filter((name) => !name!.startsWith('node:') && name !== 'module')).toEqual([]);
  });
});
