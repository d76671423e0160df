// Bundles main and each worker into ESM files runnable by node and deno: the CLI as a
// launcher and one whole bundle per command (dist/laneward-<command>.mjs), each worker and
// the bench as one file apiece.
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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
if (table.length === 0) throw new Error(`build: no command entries read from ${tableFile}`);
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
await Promise.all([
  ...commandBuilds,
  build({ ...common, outdir: dist, entryPoints: Object.fromEntries(Object.entries(whole).map(([name, file]) => [name, join(root, file)])) }),
]);
// The launcher loads the one bundle its command needs. The names are checked against the
// table, so argv never names a file.
const names = table.map((e) => e.name);
const launcher = `const commands = new Set(${JSON.stringify(names)});
const name = process.argv[2];
await import(commands.has(name) ? \`./laneward-\${name}.mjs\` : './laneward-main.mjs');
`;
// The require banner loads node:module at every start; a file that never calls require
// (no inlined CommonJS) starts without it.
const BANNER = `${bundleOptions(id).banner.js}\n`;
const outputs = [...Object.keys(whole), ...names.map((n) => `laneward-${n}`), 'laneward-main'];
for (const name of outputs) {
  const file = join(dist, `${name}.mjs`);
  const text = readFileSync(file, 'utf8');
  const body = text.startsWith(BANNER) && !/\brequire\b/.test(text.slice(BANNER.length)) ? text.slice(BANNER.length) : text;
  if (body !== text) writeFileSync(file, body);
}
// The CLI is the package's `laneward` binary: run by path (npx, npm's bin link), it needs
// its interpreter named, or a shell reads it as a script. Node and Deno skip the line.
writeFileSync(join(dist, 'laneward.mjs'), `#!/usr/bin/env node\n${launcher}`);
chmodSync(join(dist, 'laneward.mjs'), 0o755);
// Written last: a dist/ whose build-id matches the sources is complete.
writeFileSync(join(dist, 'build-id'), `${id}\n`);
process.stdout.write(`built dist/ (build ${id})\n`);
