// Bundles main and each worker into ESM files runnable by node and deno: the CLI as a
// launcher and one whole bundle per command (dist/laneward-<command>.mjs), each worker and
// the bench as one file apiece.
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { build } from 'esbuild';
import { buildId } from './build-id.mjs';
import { bundleOptions } from './bundle-options.mjs';

const root = new URL('..', import.meta.url).pathname;
const dist = join(root, 'dist');

const id = buildId(root);
// Removed first: an interrupted build leaves no id that could match.
rmSync(join(dist, 'build-id'), { force: true });
const whole = {
  validate: 'workers/validate/task.ts',
  supervise: 'workers/supervise/task.ts',
  'qa-service': 'main/crew/qa-service.ts',
  bench: 'bench/main.ts',
};
const common = {
  // Written below, each file whole: a command started while dist/ is rebuilt (a test file
  // beside one that builds) reads the old bundle or the new one, never an empty one that
  // ends with exit 0 and no line.
  write: false,
  outExtension: { '.js': '.mjs' },
  ...bundleOptions(id),
  legalComments: 'none',
  minifyWhitespace: true,
  minifySyntax: true,
};

// The command table's entries, `name: async () => (await import('./file.ts')).EXPORT`.
const tableFile = join(root, 'main/cli/commands.ts');
const table = [...readFileSync(tableFile, 'utf8').matchAll(/^\s+([a-z]+): async \(\) => \(await import\('(\.\/[a-z-]+\.ts)'\)\)\.([A-Z_]+),$/gm)].map(
  ([, name, file, exported]) => ({ name, file, exported }),
);
// An entry of another shape would be left out of the launcher's table and answer as an
// unknown command: the build stops instead.
const entryLines = readFileSync(tableFile, 'utf8').split('\n').filter((text) => text.includes('async () =>')).length;
if (table.length === 0 || table.length !== entryLines) throw new Error(`build: read ${table.length} of ${entryLines} command entries in ${tableFile}; keep each as name: async () => (await import('./file.ts')).EXPORT,`);
// One bundle of every command was 980 KB that node compiled at every start (30 ms of a
// start's CPU, the largest frame of its profile) for a command that runs a tenth of it. So
// each command is its own bundle of the whole CLI with a table of that one command, and
// `laneward-main` (no command: help, --version, an unknown name) has an empty table. A
// command's bundle shares no module with another's, so no state is split between files.
const oneCommand = (entries) => ({
  name: 'one-command-table',
  setup(b) {
    b.onResolve({ filter: /^\.\/commands\.ts$/ }, (args) =>
      args.importer.endsWith(join('main', 'cli', 'main.ts')) ? { path: 'commands', namespace: 'one-command' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'one-command' }, () => ({
      resolveDir: join(root, 'main/cli'),
      loader: 'ts',
      contents: `import type { Command, Group } from './command.ts';\nexport const COMMANDS: Readonly<Record<string, () => Promise<Command | Group>>> = {${entries
        .map((e) => `${e.name}: async () => (await import('${e.file}')).${e.exported}`)
        .join(', ')}};\n`,
    }));
  },
});
const commandBuilds = [...table.map((entry) => ({ name: entry.name, entries: [entry] })), { name: 'main', entries: [] }].map(({ name, entries }) =>
  build({ ...common, entryPoints: [join(root, 'main/cli/entry.ts')], outfile: join(dist, `laneward-${name}.mjs`), plugins: [oneCommand(entries)] }),
);
const built = await Promise.all([
  ...commandBuilds,
  build({ ...common, outdir: dist, entryPoints: Object.fromEntries(Object.entries(whole).map(([name, file]) => [name, join(root, file)])) }),
]);
// The launcher loads the one bundle its command needs. The names are checked against the
// table, so argv never names a file. Beside the launcher's real path: run through a
// symlink (npm's bin link), deno keeps the link's own path as import.meta.url.
const names = table.map((e) => e.name);
const launcher = `import { realpathSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
const commands = new Set(${JSON.stringify(names)});
const name = process.argv[2];
const here = pathToFileURL(realpathSync(fileURLToPath(import.meta.url)));
await import(new URL(commands.has(name) ? \`./laneward-\${name}.mjs\` : './laneward-main.mjs', here).href);
`;
const writeWhole = (file, text, mode = 0o644) => {
  const temp = join(dist, `.${basename(file)}.${process.pid}.tmp`);
  writeFileSync(temp, text, { mode });
  chmodSync(temp, mode);
  renameSync(temp, file);
};
// The require banner loads node:module at every start; a file that never calls require
// (no inlined CommonJS) starts without it.
const BANNER = `${bundleOptions(id).banner.js}\n`;
mkdirSync(dist, { recursive: true });
for (const output of built.flatMap((result) => result.outputFiles)) {
  const text = output.text;
  const body = text.startsWith(BANNER) && !/\brequire\b/.test(text.slice(BANNER.length)) ? text.slice(BANNER.length) : text;
  writeWhole(output.path, body);
}
// The CLI is the package's `laneward` binary: run by path (npx, npm's bin link), it needs
// its interpreter named, or a shell reads it as a script. Node and Deno skip the line.
writeWhole(join(dist, 'laneward.mjs'), `#!/usr/bin/env node\n${launcher}`, 0o755);
// Written last: a dist/ whose build-id matches the sources is complete.
writeFileSync(join(dist, 'build-id'), `${id}\n`);
process.stdout.write(`built dist/ (build ${id})\n`);
