import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { ROOT } from './helpers/cli.ts';

// npm ci prints an install-scripts warning for every dependency whose install script
// package.json's allowScripts does not cover: a newcomer's first command should end clean.

describe('package.json allowScripts', () => {
  test('should cover every locked dependency that has an install script, and nothing else', () => {
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { hasInstallScript?: boolean }> };
    const scripted = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== '' && entry.hasInstallScript === true)
      .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length))
      .sort();
    const allow = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> }).allowScripts ?? {};
    expect(Object.keys(allow).sort()).toEqual(scripted);
    expect(Object.values(allow).every((value) => value === true)).toBe(true);
  });
});
