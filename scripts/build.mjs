// Bundles main and each worker into one file apiece, runnable by node and deno: each
// worker as ESM, the CLI as CommonJS inside its start (scripts/cached-start.cjs), then makes
// the CLI's code cache for this node by one warm-up run.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { build } from 'esbuild';
import { buildId } from './build-id.mjs';
import { bundleOptions, cliBundleOptions } from './bundle-options.mjs';

const root = new URL('..', import.meta.url).pathname;
const dist = join(root, 'dist');

const id = buildId(root);
// Removed first: an interrupted build leaves no id that could match.
rmSync(join(dist, 'build-id'), { force: true });
const entries = {
  validate: 'workers/validate/task.ts',
  supervise: 'workers/supervise/task.ts',
  'qa-service': 'main/crew/qa-service.ts',
  bench: 'bench/main.ts',
};

const built = await build({
  entryPoints: Object.fromEntries(Object.entries(entries).map(([name, file]) => [name, join(root, file)])),
  outdir: dist,
  // Written below, each file whole: a command started while dist/ is rebuilt (a test file
  // beside one that builds) reads the old bundle or the new one, never an empty one that
  // ends with exit 0 and no line.
  write: false,
  outExtension: { '.js': '.mjs' },
  ...bundleOptions(id),
  legalComments: 'none',
  minifyWhitespace: true,
  minifySyntax: true,
});
const cli = await build({
  entryPoints: [join(root, 'main/cli/entry.ts')],
  write: false,
  outfile: join(dist, 'laneward.cjs'),
  ...cliBundleOptions(id),
  legalComments: 'none',
  minifyWhitespace: true,
  minifySyntax: true,
});
const writeWhole = (file, text, mode) => {
  const temp = join(dist, `.${basename(file)}.${process.pid}.tmp`);
  writeFileSync(temp, text, { mode });
  chmodSync(temp, mode);
  renameSync(temp, file);
};
// The require banner loads node:module at every start; a bundle that never calls require
// (no inlined CommonJS) starts without it.
const BANNER = `${bundleOptions(id).banner.js}\n`;
mkdirSync(dist, { recursive: true });
// A dist/ once laid out otherwise (the CLI as ESM, a launcher and per-command bundles) keeps
// no stale copy of the CLI beside the one bundle, and no cache of another build's CLI.
for (const name of readdirSync(dist)) if (/^laneward(-[a-z]+)?\.mjs$|^laneward\.cjs\..*\.cache$/.test(name)) rmSync(join(dist, name), { force: true });
for (const output of built.outputFiles) {
  const text = output.text;
  const body = text.startsWith(BANNER) && !/\brequire\b/.test(text.slice(BANNER.length)) ? text.slice(BANNER.length) : text;
  writeWhole(output.path, body, 0o644);
}
// The CLI is the package's `laneward` binary: run by path (npx, npm's bin link), it needs
// its interpreter named, or a shell reads it as a script. Node and Deno skip the line.
const start = readFileSync(join(root, 'scripts', 'cached-start.cjs'), 'utf8').replace('__LANEWARD_BUILD_ID__', JSON.stringify(id));
const [before, after] = start.split('__LANEWARD_BODY__');
const bin = join(dist, 'laneward.cjs');
writeWhole(bin, `#!/usr/bin/env node\n${before}${JSON.stringify(cli.outputFiles[0].text)}${after}`, 0o755);
const cache = codeCache(bin);
// Written last: a dist/ whose build-id matches the sources is complete.
writeFileSync(join(dist, 'build-id'), `${id}\n`);
process.stdout.write(`built dist/ (build ${id}; ${cache})\n`);

/**
 * The CLI's code cache for this node, made by one `plan next` of a throwaway run (store,
 * plan, prompts and files: most of what a command compiles), or why there is none. The
 * build stands without it: every start then compiles the bundle from its text.
 */
function codeCache(file) {
  const scratch = mkdtempSync(join(tmpdir(), 'laneward-build-cache-'));
  try {
    const plan = join(scratch, 'plan.md');
    writeFileSync(plan, '# Plan\n\n## Implementation plan\n\n1. Warm the cache.\n\n## Review record\n\n');
    const env = { PATH: process.env.PATH ?? '', HOME: scratch, LANEWARD_SESSION_KIND: 'interactive', LANEWARD_CODE_CACHE: id };
    const ran = spawnSync(process.execPath, [file, 'plan', 'next', '--plan', plan, '--out', join(scratch, 'run'), '--state', join(scratch, 'state')], { cwd: scratch, env, encoding: 'utf8', timeout: 60_000 });
    const made = `${basename(file)}.${process.versions.v8}.cache`;
    if (ran.status !== 0) return `no code cache: the warm-up exited ${ran.status ?? ran.signal ?? ran.error?.message}: ${(ran.stderr ?? '').trim().split('\n')[0]}`;
    return readdirSync(dist).includes(made) ? `code cache ${made}` : 'no code cache: the warm-up wrote none';
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
