import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { helpTexts, renderCommandsDoc } from '../main/cli/help-doc.ts';
import { ensureBuilt } from './helpers/cli.ts';

const root = join(import.meta.dirname, '..');

describe('docs/commands.md', () => {
  it('is what node scripts/docs-commands.mjs renders from the help texts today', async () => {
    const current = readFileSync(join(root, 'docs', 'commands.md'), 'utf8');
    // On failure: run `node scripts/docs-commands.mjs` and commit docs/commands.md.
    expect(current).toBe(await renderCommandsDoc());
  });

  it('covers every command and subcommand of the command table', async () => {
    const texts = await helpTexts();
    expect(texts.length).toBeGreaterThan(40);
    for (const { argv, text } of texts) expect(text, argv.join(' ')).not.toBe('');
  });

  it('matches what the built CLI prints for a sample of help texts', () => {
    ensureBuilt();
    const doc = readFileSync(join(root, 'docs', 'commands.md'), 'utf8');
    for (const argv of [['--help'], ['plan', 'run', '--help'], ['lease', '--help'], ['qa', 'turn', '--help']]) {
      const run = spawnSync(process.execPath, [join(root, 'dist', 'laneward.cjs'), ...argv], { encoding: 'utf8' });
      expect(run.status, argv.join(' ')).toBe(0);
      expect(doc).toContain(run.stdout.trimEnd());
    }
  });
});
