// Bundles main and each worker into one ESM file apiece, runnable by node and deno.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const root = new URL('..', import.meta.url).pathname;

/** Same sources, same id: hash every source file the bundles are made of. */
function buildId() {
  const hash = createHash('sha256');
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.ts')) hash.update(path.slice(root.length)).update(readFileSync(path));
    }
  };
  for (const dir of ['main', 'workers', 'formats', 'fixtures', 'bench']) walk(join(root, dir));
  return hash.digest('hex').slice(0, 16);
}

const id = buildId();
const entries = {
  laneward: 'main/cli/entry.ts',
  validate: 'workers/validate/task.ts',
  supervise: 'workers/supervise/task.ts',
  bench: 'bench/main.ts',
};

await build({
  entryPoints: Object.fromEntries(Object.entries(entries).map(([name, file]) => [name, join(root, file)])),
  outdir: join(root, 'dist'),
  outExtension: { '.js': '.mjs' },
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // Native addons load from node_modules on both runtimes; they cannot be inlined.
  // Piscina starts its own worker script from beside its code, so it stays there too.
  external: ['lmdb', 'cbor-extract', '@napi-rs/nice', 'msgpackr-extract', 'piscina'],
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  define: {
    __dirname: 'import.meta.dirname',
    __filename: 'import.meta.filename',
    __LANEWARD_BUILD_ID__: JSON.stringify(id),
  },
  legalComments: 'none',
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
});
process.stdout.write(`built dist/ (build ${id})\n`);
