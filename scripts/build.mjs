// Bundles main and each worker into one ESM file apiece, runnable by node and deno.
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { buildId } from './build-id.mjs';
import { bundleOptions } from './bundle-options.mjs';

const root = new URL('..', import.meta.url).pathname;

const id = buildId(root);
// Removed first: an interrupted build leaves no id that could match.
rmSync(join(root, 'dist', 'build-id'), { force: true });
const entries = {
  laneward: 'main/cli/entry.ts',
  validate: 'workers/validate/task.ts',
  supervise: 'workers/supervise/task.ts',
  'qa-service': 'main/crew/qa-service.ts',
  bench: 'bench/main.ts',
};

await build({
  entryPoints: Object.fromEntries(Object.entries(entries).map(([name, file]) => [name, join(root, file)])),
  outdir: join(root, 'dist'),
  outExtension: { '.js': '.mjs' },
  ...bundleOptions(id),
  legalComments: 'none',
  minifyWhitespace: true,
  minifySyntax: true,
});
// The require banner loads node:module at every start; a bundle that never calls require
// (no inlined CommonJS) starts without it.
const BANNER = `${bundleOptions(id).banner.js}\n`;
for (const name of Object.keys(entries)) {
  const file = join(root, 'dist', `${name}.mjs`);
  const text = readFileSync(file, 'utf8');
  const body = text.startsWith(BANNER) && !/\brequire\b/.test(text.slice(BANNER.length)) ? text.slice(BANNER.length) : text;
  // The CLI is the package's `laneward` binary: run by path (npx, npm's bin link), it needs
  // its interpreter named, or a shell reads it as a script. Node and Deno skip the line.
  const out = name === 'laneward' ? `#!/usr/bin/env node\n${body}` : body;
  if (out !== text) writeFileSync(file, out);
  if (name === 'laneward') chmodSync(file, 0o755);
}
// Written last: a dist/ whose build-id matches the sources is complete.
writeFileSync(join(root, 'dist', 'build-id'), `${id}\n`);
process.stdout.write(`built dist/ (build ${id})\n`);
