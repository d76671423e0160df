import { readdirSync, readFileSync } from 'node:fs';
import { build } from 'esbuild';
import { beforeAll, describe, expect, test } from 'vitest';
import { COMMAND_NAMES } from '../main/cli/command-names.ts';
import { BUNDLE, ROOT, ensureBuilt } from './helpers/cli.ts';

const staticImports = (bundle: string) =>
  [...bundle.matchAll(/import\s*(?:\{[^}]*\}|\*\s+as\s+\w+|\w+)\s*from\s*"([^"]+)"/g)].map((m) => m[1]);

beforeAll(() => ensureBuilt());

/** The launcher and every command's bundle: each is what some start of the CLI compiles. */
const cliBundles = () => [BUNDLE, ...readdirSync(`${ROOT}dist`).filter((name) => /^laneward-.+\.mjs$/.test(name)).map((name) => `${ROOT}dist/${name}`)];

describe('dist/laneward.mjs', () => {
  // A static import of an external package runs at every start of every command: the
  // store's native addon and the pool load on first use only (deadline, lease, gate and a
  // single validate need neither, and lease's fd accounting depends on it).
  test('should import no package but node built-ins at start-up', () => {
    for (const bundle of cliBundles()) {
      const statics = staticImports(readFileSync(bundle, 'utf8'));
      expect(statics.filter((name) => !name!.startsWith('node:') && name !== 'module'), bundle).toEqual([]);
    }
  });

  test('should not load the HTTP stack at start-up', () => {
    for (const bundle of cliBundles()) expect(staticImports(readFileSync(bundle, 'utf8')), bundle).not.toContain('node:http');
  });

  // Each start compiles the launcher and one command's bundle, never every command's code.
  test('should be a launcher with one bundle per command, each holding only its own command', () => {
    expect(readFileSync(BUNDLE, 'utf8').length).toBeLessThan(2_000);
    const names = readdirSync(`${ROOT}dist`).filter((name) => /^laneward-.+\.mjs$/.test(name)).sort();
    expect(names).toEqual([...COMMAND_NAMES, 'core'].map((name) => `laneward-${name}.mjs`).sort());
    const artifact = readFileSync(`${ROOT}dist/laneward-artifact.mjs`, 'utf8');
    expect(artifact).toContain('ARTIFACT_SUMMARY');
    expect(artifact).not.toContain('PHASE_STATUS');
  });
});

describe('main/crew/serve.ts', () => {
  // Bundled the way scripts/build.mjs bundles: whoever imports serveCrew, statically or
  // not, starts no HTTP stack until a view is served.
  test('should import only built-ins, and node:http only when serving', async () => {
    const built = await build({
      entryPoints: [`${ROOT}main/crew/serve.ts`],
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
