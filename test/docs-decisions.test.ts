import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const doc = readFileSync(join(root, 'docs', 'decisions.md'), 'utf8');

/** Each decision: a top-level bullet that starts with a bold title, up to the next one or heading. */
function decisions(text: string): string[] {
  const items: string[] = [];
  let current: string[] | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('- **')) {
      if (current !== undefined) items.push(current.join('\n'));
      current = [line];
    } else if (line.startsWith('#')) {
      if (current !== undefined) items.push(current.join('\n'));
      current = undefined;
    } else if (current !== undefined) current.push(line);
  }
  if (current !== undefined) items.push(current.join('\n'));
  return items;
}

/** `test/<file>.test.ts › <describe> › <test name>` references in a piece of the doc. */
function references(text: string): { file: string; names: string[] }[] {
  return [...text.matchAll(/`(test\/[A-Za-z0-9_.-]+\.test\.ts) › ([^`]+)`/g)].map((match) => ({ file: match[1]!, names: match[2]!.split(' › ') }));
}

/** A name occurs as a whole string literal: '...' (quotes escaped as \'), "..." or `...`. */
function declares(source: string, name: string): boolean {
  return [`'${name.replaceAll("'", "\\'")}'`, `"${name}"`, `\`${name}\``].some((literal) => source.includes(literal));
}

describe('docs/decisions.md', () => {
  const items = decisions(doc);

  it('lists decisions, each naming the test that pins it or saying it is not pinned', () => {
    expect(items.length).toBeGreaterThan(50);
    for (const item of items) {
      const title = item.split('\n')[0]!;
      expect(references(item).length > 0 || /not pinned by a test/i.test(item), title).toBe(true);
    }
  });

  it('names only test files that exist and test names that occur in them', () => {
    const refs = references(doc);
    expect(refs.length).toBeGreaterThan(100);
    const missing: string[] = [];
    for (const { file, names } of refs) {
      const path = join(root, file);
      if (!existsSync(path)) {
        missing.push(`${file}: no such file`);
        continue;
      }
      const source = readFileSync(path, 'utf8');
      for (const name of names) if (!declares(source, name)) missing.push(`${file}: no test or describe named ${JSON.stringify(name)}`);
    }
    expect(missing).toEqual([]);
  });
});
