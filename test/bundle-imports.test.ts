import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { wrap } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Script } from 'node:vm';
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

/** The CLI's bundle: the string literal dist/laneward.cjs compiles (scripts/cached-start.cjs). */
function cliBody(): string {
  const bin = readFileSync(BUNDLE, 'utf8');
  const line = bin.split('\n').find((l) => l.startsWith('  const body = "'))!;
  return JSON.parse(line.slice('  const body = '.length, -1)) as string;
}

/** What a start of the CLI loaded: the files of packages (require's cache, the bin aside) and node's built-ins. */
function startLoads(args: readonly string[]): { files: string[]; builtins: string[]; stdout: string } {
  const dir = mkdtempSync(join(tmpdir(), 'laneward-loads-'));
  try {
    const out = join(dir, 'loads.json');
    const hook = join(dir, 'hook.cjs');
    writeFileSync(hook, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify({ files: Object.keys(require.cache), builtins: process.moduleLoadList })));\n`);
    const ran = spawnSync(process.execPath, ['--require', hook, BUNDLE, ...args], { encoding: 'utf8' });
    expect(ran.status, ran.stderr).toBe(0);
    const loads = JSON.parse(readFileSync(out, 'utf8')) as { files: string[]; builtins: string[] };
    return { files: loads.files.filter((f) => f !== hook && f !== BUNDLE), builtins: loads.builtins, stdout: ran.stdout };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('dist/laneward.cjs', () => {
  // A package loaded at start-up loads at every start of every command: the store's
  // native addon and the pool load on first use only (deadline, lease, gate and a single
  // validate need neither, and lease's fd accounting depends on it).
  test.each([[['--help']], [['gate', '--help']], [['deadline', 'status', '--help']]])('should load no package but node built-ins when it starts %j', (args) => {
    expect(startLoads(args).files).toEqual([]);
  });

  // The design runs main as one single-file bundle on node and deno: every module of ours
  // is inside it, so a start loads nothing beside it (another bundle, a chunk); the
  // workers' own bundles run only as threads or children, never loaded.
  test('should be the whole CLI in one file that loads no file beside it', () => {
    const body = cliBody();
    const specifiers = loadedSpecifiers(body);
    expect(specifiers).toContain('node:fs');
    expect(specifiers.filter((name) => name!.startsWith('.') || name!.startsWith('/') || name!.includes('.mjs') || name!.includes('.cjs'))).toEqual([]);
    // An import or a require of a name computed at run time could load any file: there is none.
    expect(body.match(/\bimport\s*\(\s*[^"'`\s]/g)).toBeNull();
    expect(body.match(/(?<![\w.$])require\s*\(\s*[^"'`\s]/g)).toBeNull();
    // Beside it in dist/: its code cache for this node, no other copy of the CLI.
    expect(readdirSync(join(ROOT, 'dist')).filter((name) => name.startsWith('laneward')).sort()).toEqual(['laneward.cjs', `laneward.cjs.${process.versions.v8}.cache`]);
  });

  test('should leave bullmq and ioredis in node_modules, loaded only when a --queue command runs', () => {
    const body = cliBody();
    expect(body).toContain('require("bullmq")');
    expect(body).toContain('require("ioredis")');
    // Inlined, their 1.5 MB would be parsed at every start of every command.
    expect(body).not.toContain('maxRetriesPerRequest must be null');
  });

  test('should not load the HTTP stack at start-up', () => {
    const loads = startLoads(['--help']);
    expect(loads.stdout).toMatch(/^laneward \d+\.\d+\.\d+: /);
    expect(loads.builtins.filter((name) => /^NativeModule (_?https?|http2)\b/.test(name))).toEqual([]);
  });

  // The code cache is V8's own check: made by the build for this node and this text, it is
  // taken; another node's, a stale or a broken one is rejected, and the bundle is compiled
  // from its text with the same result.
  test('should compile from its code cache under this node', () => {
    const cached = readFileSync(`${BUNDLE}.${process.versions.v8}.cache`);
    const script = new Script(wrap(cliBody()), { filename: BUNDLE, cachedData: cached });
    expect(script.cachedDataRejected).toBe(false);
  });

  test.each(['none', 'garbage', 'another build', 'a FIFO', 'a link to /dev/zero', 'a directory'] as const)('should run the same with %s beside it as its code cache', (kind) => {
    const dir = mkdtempSync(join(tmpdir(), 'laneward-cache-'));
    try {
      const bin = join(dir, 'laneward.cjs');
      copyFileSync(BUNDLE, bin);
      const cache = `${bin}.${process.versions.v8}.cache`;
      if (kind === 'garbage') writeFileSync(cache, Buffer.alloc(4096, 7));
      // Another text's cache: V8 checks the source it was made from.
      if (kind === 'another build') writeFileSync(cache, new Script(wrap('exports.x = 1;'), { filename: bin }).createCachedData());
      if (kind === 'a FIFO') expect(spawnSync('mkfifo', [cache]).status).toBe(0);
      if (kind === 'a link to /dev/zero') symlinkSync('/dev/zero', cache);
      if (kind === 'a directory') mkdirSync(cache);
      for (const args of [['--version'], ['gate', '--help'], ['artifact', 'validate', dir]]) {
        const expected = spawnSync(process.execPath, [BUNDLE, ...args], { encoding: 'utf8' });
        const ran = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', timeout: 20_000 });
        expect({ code: ran.status, stdout: ran.stdout, stderr: ran.stderr }).toEqual({ code: expected.status, stdout: expected.stdout, stderr: expected.stderr });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
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
    const bin = join(ROOT, 'dist', 'laneward.cjs');
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
      symlinkSync(join(ROOT, 'dist', 'laneward.cjs'), link);
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
