import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { beforeAll, describe, expect, test } from 'vitest';
import { BUNDLE, ROOT, ensureBuilt } from './helpers/cli.ts';

const staticImports = (bundle: string) =>
  [...bundle.matchAll(/import\s*(?:\{[^}]*\}|\*\s+as\s+\w+|\w+)\s*from\s*["']([^"']+)["']/g)].map((m) => m[1]);
// Every specifier the bundle can load: static imports, `import "x"`, `import("x")` and `require("x")`.
const loadedSpecifiers = (bundle: string) => [
  ...staticImports(bundle),
  ...[...bundle.matchAll(/(?:\bimport\s*\(\s*|\brequire\s*\(\s*|\bimport\s*)["'`]([^"'`]+)["'`]/g)].map((m) => m[1]),
];

beforeAll(() => ensureBuilt());

describe('dist/laneward.mjs', () => {
  // A static import of an external package runs at every start of every command: the
  // store's native addon and the pool load on first use only (deadline, lease, gate and a
  // single validate need neither, and lease's fd accounting depends on it).
  test('should import no package but node built-ins at start-up', () => {
    const statics = staticImports(readFileSync(BUNDLE, 'utf8'));
    expect(statics.filter((name) => !name!.startsWith('node:') && name !== 'module')).toEqual([]);
  });

  // The design runs main as one single-file bundle on node and deno: every module of ours
  // is inside it, so a start imports nothing beside it (another bundle, a chunk); the
  // workers' own bundles run only as threads or children, never imported.
  test('should be the whole CLI in one file that imports no file beside it', () => {
    const bundle = readFileSync(BUNDLE, 'utf8');
    const specifiers = loadedSpecifiers(bundle);
    expect(specifiers).toContain('node:fs');
    expect(specifiers.filter((name) => name!.startsWith('.') || name!.startsWith('/') || name!.includes('.mjs'))).toEqual([]);
    // An import of a name computed at run time could load any file: there is none.
    expect(bundle.match(/\bimport\s*\(\s*[^"'`\s]/g)).toBeNull();
    expect(readdirSync(join(ROOT, 'dist')).filter((name) => /^laneward.*\.mjs$/.test(name))).toEqual(['laneward.mjs']);
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

  // npm's bin link is a symlink elsewhere: the bundle runs through it under node and deno.
  test.each(['node', 'deno'] as const)('should run through a symlink elsewhere, under %s', (runtime) => {
    ensureBuilt();
    const dir = mkdtempSync(join(tmpdir(), 'laneward-bin-'));
    try {
      const link = join(dir, 'laneward');
      symlinkSync(join(ROOT, 'dist', 'laneward.mjs'), link);
      const command = runtime === 'deno' ? [join(ROOT, 'node_modules', '.bin', 'deno'), 'run', '-A', '--quiet', link] : [process.execPath, link];
      for (const [args, out] of [[['--version'], /^\d+\.\d+\.\d+\n$/], [['gate', '--help'], /^usage: laneward gate /]] as const) {
        const ran = spawnSync(command[0]!, [...command.slice(1), ...args], { encoding: 'utf8', env: { ...process.env, DENO_NO_UPDATE_CHECK: '1' } });
        expect({ code: ran.status, stderr: ran.stderr }).toEqual({ code: 0, stderr: '' });
        expect(ran.stdout).toMatch(out);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
