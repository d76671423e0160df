import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { beforeAll, describe, expect, test } from 'vitest';
import { BUNDLE, ROOT, ensureBuilt } from './helpers/cli.ts';

const staticImports = (bundle: string) =>
  [...bundle.matchAll(/import\s*(?:\{[^}]*\}|\*\s+as\s+\w+|\w+)\s*from\s*"([^"]+)"/g)].map((m) => m[1]);

beforeAll(() => ensureBuilt());

describe('dist/laneward.mjs', () => {
  // A static import of an external package runs at every start of every command: the
  // store's native addon and the pool load on first use only (deadline, lease, gate and a
  // single validate need neither, and lease's fd accounting depends on it).
  test('should import no package but node built-ins at start-up', () => {
    const statics = staticImports(readFileSync(BUNDLE, 'utf8'));
    expect(statics.filter((name) => !name!.startsWith('node:') && name !== 'module')).toEqual([]);
  });

  test('should leave bullmq and ioredis in node_modules, imported only when a --queue command runs', () => {
    const bundle = readFileSync(BUNDLE, 'utf8');
    expect(bundle).toContain('import("bullmq")');
    expect(bundle).toContain('import("ioredis")');
    // Inlined, their 1.5 MB would be parsed at every start of every command.
    expect(bundle).not.toContain('maxRetriesPerRequest must be null');
  });

  test('should not load the HTTP stack at start-up', () => {
    expect(staticImports(readFileSync(BUNDLE, 'utf8'))).not.toContain('node:http');
  });
});

describe('main/console/serve.ts', () => {
  // Bundled the way scripts/build.mjs bundles: whoever imports serveCrew, statically or
  // not, starts no HTTP stack until a view is served.
  test('should import only built-ins, and node:http only when serving', async () => {
    const built = await build({
      entryPoints: [`${ROOT}main/console/serve.ts`],
      bundle: true,
      write: false,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      logLevel: 'silent',
    });
    const code = built.outputFiles[0]!.text;
    expect(staticImports(code).every((name) => name!.startsWith('node:'))).toBe(true);
    expect(staticImports(code)).not.toContain('node:http');
    expect(code).toContain('import("node:http")');
  });
});

describe('the laneward binary', () => {
  test('should run by its own path, as npm links the package bin: it names node on its first line and is executable', () => {
    ensureBuilt();
    const bin = join(ROOT, 'dist', 'laneward.mjs');
    expect(readFileSync(bin, 'utf8').split('\n', 1)[0]).toBe('#!/usr/bin/env node');
    const ran = spawnSync(bin, ['--help'], { encoding: 'utf8' });
    expect(ran.status).toBe(0);
    expect(ran.stdout).toMatch(/^laneward \d+\.\d+\.\d+: /);
  });
});
