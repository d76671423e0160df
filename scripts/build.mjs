// Bundles main and each worker into one ESM file apiece, runnable by node and deno.
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { buildId } from './build-id.mjs';

const root = new URL('..', import.meta.url).pathname;

const id = buildId(root);
// Removed first: an interrupted build leaves no id that could match.
rmSync(join(root, 'dist', 'build-id'), { force: true });
const entries = {
  laneward: 'main/cli/launcher.ts',
  validate: 'workers/validate/task.ts',
  supervise: 'workers/supervise/task.ts',
  'qa-service': 'main/crew/qa-service.ts',
  bench: 'bench/main.ts',
};

const options = {
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
};

// The CLI is one bundle per command (dist/laneward-<command>.mjs, the whole CLI with only
// that command in its table) behind a launcher (dist/laneward.mjs) that picks one by
// argv[2]: a start compiles only the command it runs. laneward-core has no command.
const commandsFile = join(root, 'main/cli/commands.ts');
const lines = [...readFileSync(commandsFile, 'utf8').matchAll(/^ {2}([a-z-]+): (async \(\) => .+),$/gm)];
const names = JSON.parse(/COMMAND_NAMES = (\[[^\]]*\])/.exec(readFileSync(join(root, 'main/cli/command-names.ts'), 'utf8'))[1].replaceAll("'", '"'));
const table = new Map(lines.map((m) => [m[1], m[2]]));
if (names.length !== table.size || !names.every((name) => table.has(name))) {
  throw new Error(`main/cli/commands.ts lines (${[...table.keys()]}) do not match COMMAND_NAMES (${names})`);
}
const only = (name) => ({
  name: 'laneward-only-command',
  setup(b) {
    b.onResolve({ filter: /[/\\]commands\.ts$/ }, (args) =>
      args.importer.endsWith(join('main', 'cli', 'main.ts')) ? { path: commandsFile, namespace: 'laneward-commands' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'laneward-commands' }, () => ({
      contents: `export const COMMANDS = {${name === undefined ? '' : ` ${JSON.stringify(name)}: ${table.get(name)} `}};\n`,
      resolveDir: join(root, 'main', 'cli'),
      loader: 'ts',
    }));
  },
});
await Promise.all([
  build({ ...options, entryPoints: Object.fromEntries(Object.entries(entries).map(([name, file]) => [name, join(root, file)])) }),
  ...[undefined, ...names].map((name) =>
    build({ ...options, entryPoints: { [`laneward-${name ?? 'core'}`]: join(root, 'main/cli/entry.ts') }, plugins: [only(name)] }),
  ),
]);
// The require banner loads node:module at every start; a bundle that never calls require
// (no inlined CommonJS) starts without it.
const BANNER = `${options.banner.js}\n`;
for (const name of readdirSync(join(root, 'dist'))) {
  if (!name.endsWith('.mjs')) continue;
  const file = join(root, 'dist', name);
  const text = readFileSync(file, 'utf8');
  if (text.startsWith(BANNER) && !/\brequire\b/.test(text.slice(BANNER.length))) writeFileSync(file, text.slice(BANNER.length));
}
// Bundles of commands that no longer exist go; the others were overwritten in place, so a
// CLI started during a build finds its command's bundle.
const built = new Set([undefined, ...names].map((name) => `laneward-${name ?? 'core'}.mjs`));
for (const file of readdirSync(join(root, 'dist'), { withFileTypes: true })) {
  if (file.isFile() && /^laneward-.*\.mjs$/.test(file.name) && !built.has(file.name)) rmSync(join(root, 'dist', file.name));
}
// Written last: a dist/ whose build-id matches the sources is complete.
writeFileSync(join(root, 'dist', 'build-id'), `${id}\n`);
process.stdout.write(`built dist/ (build ${id})\n`);
