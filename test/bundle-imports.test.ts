import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { beforeAll, describe, expect, test } from 'vitest';
import { COMMANDS } from '../main/cli/commands.ts';
import { ROOT, ensureBuilt } from './helpers/cli.ts';

const staticImports = (bundle: string) =>
  [...bundle.matchAll(/import\s*(?:\{[^}]*\}|\*\s+as\s+\w+|\w+)\s*from\s*["']([^"']+)["']/g)].map((m) => m[1]);

beforeAll(() => ensureBuilt());

// The CLI is a launcher (dist/laneward.mjs) and one bundle per command
// (dist/laneward-<command>.mjs, laneward-main.mjs for help and unknown names).
const cliBundles = () => readdirSync(join(ROOT, 'dist')).filter((name) => /^laneward(-[a-z]+)?\.mjs$/.test(name));
const distText = (name: string) => readFileSync(join(ROOT, 'dist', name), 'utf8');

describe('dist/laneward.mjs', () => {
  // A static import of an external package runs at every start of every command: the
  // store's native addon and the pool load on first use only (deadline, lease, gate and a
  // single validate need neither, and lease's fd accounting depends on it).
  test('should import no package but node built-ins at start-up, in the launcher and every command bundle', () => {
    const bundles = cliBundles();
    expect(bundles).toEqual(expect.arrayContaining(['laneward.mjs', 'laneward-main.mjs', 'laneward-artifact.mjs', 'laneward-plan.mjs', 'laneward-crew.mjs']));
    for (const name of bundles) {
      const statics = staticImports(distText(name));
      expect({ name, statics: statics.filter((spec) => !spec!.startsWith('node:') && spec !== 'module') }).toEqual({ name, statics: [] });
    }
  });

  // The launcher compiles in no time and loads the one bundle its command needs: a start
  // once compiled all 980 KB of every command (the largest frame of a start's profile).
  test('should load one command bundle per start, named from the table and never from argv', () => {
    const launcher = distText('laneward.mjs');
    expect(launcher.length).toBeLessThan(1000);
    expect(staticImports(launcher)).toEqual(['node:fs', 'node:url']);
    const names = JSON.parse(/new Set\((\[[^\]]*\])\)/.exec(launcher)![1]!) as string[];
    expect(names).toEqual(Object.keys(COMMANDS));
    expect(cliBundles().sort()).toEqual(['laneward.mjs', 'laneward-main.mjs', ...names.map((name) => `laneward-${name}.mjs`)].sort());
    // A name outside the table (a path, an option) is laneward-main's usage error.
    for (const name of ['../dist/laneward-plan', 'nope', '--version']) {
      const ran = spawnSync(process.execPath, [join(ROOT, 'dist', 'laneward.mjs'), name], { encoding: 'utf8' });
      expect(ran.status === 0 ? ran.stdout : ran.stderr).toMatch(name === '--version' ? /^\d+\.\d+\.\d+\n$/ : /\(USAGE\)\n$/);
    }
  });

  test('should leave bullmq and ioredis in node_modules, imported only when a --queue command runs', () => {
    for (const name of ['laneward-crew.mjs', 'laneward-artifact.mjs']) {
      const bundle = distText(name);
      expect(bundle).toContain('import("bullmq")');
      expect(bundle).toContain('import("ioredis")');
    }
    // Inlined, their 1.5 MB would be parsed at every start of every command.
    for (const name of cliBundles()) expect(distText(name)).not.toContain('maxRetriesPerRequest must be null');
  });

  test('should not load the HTTP stack at start-up', () => {
    for (const name of cliBundles()) expect(staticImports(distText(name))).not.toContain('node:http');
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

  // npm's bin link is a symlink; deno keeps a symlink's own path as import.meta.url, so the
  // launcher finds its command bundles beside its real path.
  test.each(['node', 'deno'] as const)('should find its command bundles when run through a symlink elsewhere, under %s', (runtime) => {
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
