// Bundles main and each worker into one ESM file apiece, runnable by node and deno.
import { chmodSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { build } from 'esbuild';
import { buildId } from './build-id.mjs';
import { bundleOptions } from './bundle-options.mjs';

const root = new URL('..', import.meta.url).pathname;
const dist = join(root, 'dist');

const id = buildId(root);
// Removed first: an interrupted build leaves no id that could match.
rmSync(join(dist, 'build-id'), { force: true });
const entries = {
  laneward: 'main/cli/entry.ts',
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
// A dist/ once laid out as a launcher and per-command bundles (laneward-<command>.mjs) keeps
// no stale copy of the CLI beside the one bundle.
for (const name of readdirSync(dist)) if (/^laneward-[a-z]+\.mjs$/.test(name)) rmSync(join(dist, name), { force: true });
for (const output of built.outputFiles) {
  const text = output.text;
  const body = text.startsWith(BANNER) && !/\brequire\b/.test(text.slice(BANNER.length)) ? text.slice(BANNER.length) : text;
  // The CLI is the package's `laneward` binary: run by path (npx, npm's bin link), it needs
  // its interpreter named, or a shell reads it as a script. Node and Deno skip the line.
  const cli = output.path === join(dist, 'laneward.mjs');
  writeWhole(output.path, cli ? `#!/usr/bin/env node\n${body}` : body, cli ? 0o755 : 0o644);
}
// Written last: a dist/ whose build-id matches the sources is complete.
writeFileSync(join(dist, 'build-id'), `${id}\n`);
process.stdout.write(`built dist/ (build ${id})\n`);
