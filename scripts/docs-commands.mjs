// Writes docs/commands.md from the CLI's own help texts (main/cli/help-doc.ts), or with
// --check exits 1 when the file differs. test/docs-commands.test.ts makes the same check.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { bundleOptions } from './bundle-options.mjs';

const root = new URL('..', import.meta.url).pathname;
const target = join(root, 'docs', 'commands.md');
// Bundled beside dist/ so that the packages it leaves external resolve from node_modules.
const bundle = join(root, 'dist', `.help-doc.${process.pid}.mjs`);
mkdirSync(join(root, 'dist'), { recursive: true });
try {
  await build({
    entryPoints: [join(root, 'main', 'cli', 'help-doc.ts')],
    outfile: bundle,
    ...bundleOptions('docs'),
  });
  const { renderCommandsDoc } = await import(pathToFileURL(bundle).href);
  const text = await renderCommandsDoc();
  if (process.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(target, 'utf8');
    } catch {}
    if (current !== text) {
      process.stderr.write('docs/commands.md is out of date: run node scripts/docs-commands.mjs\n');
      process.exitCode = 1;
    } else process.stdout.write('docs/commands.md is up to date\n');
  } else {
    mkdirSync(join(root, 'docs'), { recursive: true });
    writeFileSync(target, text);
    process.stdout.write('wrote docs/commands.md\n');
  }
} finally {
  rmSync(bundle, { force: true });
}
