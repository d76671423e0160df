import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
/** Where prose names files: the sources' comments and the docs. */
const SCANNED = ['main', 'workers', 'formats', 'bench', 'scripts', 'docs'];
const CODE = /\.(ts|mts|mjs|js)$/;

/**
 * A repo-relative path: a top-level folder of ours, then a name. One followed by `*`, `<`,
 * `{` or `$` is a pattern or a template (`main/plan/**`, `test/<file>.test.ts`), not a file.
 */
// The lookahead and back-reference take the whole run of path characters at once (no
// backtracking to a shorter prefix of a pattern); trailing punctuation is cut off after.
const PATH = /(?<![\w./-])((?:main|formats|workers|test|bench|scripts|fixtures|docs)\/(?=([\w./-]*))\2)(?![*<{$])/g;

/** The paths named in `prose`. */
function pathsIn(prose: string): string[] {
  return [...prose.matchAll(PATH)].map((match) => match[1]!.replace(/[./-]+$/, '')).filter((path) => !path.endsWith('/') && path.includes('/'));
}

/**
 * The comments of a source file, in order. A small lexer, because a comment opener can sit
 * inside a string (`'main/**' + '/*.ts'`) and a string quote inside a regular expression.
 */
export function commentsOf(text: string): string[] {
  const out: string[] = [];
  let i = 0;
  // The last significant code character: decides whether `/` opens a regular expression.
  let last = '';
  while (i < text.length) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === '/' && next === '/') {
      const end = text.indexOf('\n', i);
      const stop = end < 0 ? text.length : end;
      out.push(text.slice(i + 2, stop));
      i = stop;
    } else if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? text.length : end;
      out.push(text.slice(i + 2, stop));
      i = stop + 2;
    } else if (c === '"' || c === "'" || c === '`') {
      i = skipQuoted(text, i, c);
      last = c;
    } else if (c === '/' && (last === '' || '(,=:[!&|?{};+-*%<>~^'.includes(last) || /\b(return|typeof|case|in|of)$/.test(text.slice(Math.max(0, i - 8), i).trimEnd()))) {
      i = skipRegex(text, i);
      last = '/';
    } else {
      if (!/\s/.test(c)) last = c;
      i += 1;
    }
  }
  return out;
}

function skipQuoted(text: string, i: number, quote: string): number {
  for (i += 1; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') i += 1;
    else if (c === quote) return i + 1;
    else if (quote !== '`' && c === '\n') return i;
  }
  return i;
}

function skipRegex(text: string, i: number): number {
  let inClass = false;
  for (i += 1; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') i += 1;
    else if (c === '[') inClass = true;
    else if (c === ']') inClass = false;
    else if (c === '/' && !inClass) return i + 1;
    else if (c === '\n') return i;
  }
  return i;
}

function filesUnder(top: string): string[] {
  if (!existsSync(join(ROOT, top))) return [];
  return (readdirSync(join(ROOT, top), { recursive: true }) as string[])
    .filter((file) => !file.split('/').includes('node_modules') && (CODE.test(file) || file.endsWith('.md')))
    .map((file) => join(top, file));
}

/** Every `file:line: path` naming a path that does not exist, over the scanned folders. */
function missingPaths(): string[] {
  const missing: string[] = [];
  for (const file of SCANNED.flatMap(filesUnder)) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const prose = CODE.test(file) ? commentsOf(text) : [text];
    for (const part of prose) {
      for (const path of pathsIn(part)) {
        if (!existsSync(join(ROOT, path))) missing.push(`${file}: ${path}`);
      }
    }
  }
  return missing;
}

describe('comment paths', () => {
  test('should name only files that exist, in every comment of the sources and in the docs', () => {
    expect(missingPaths()).toEqual([]);
  });

  test.each([
    ['a line comment', '// see main/x/gone.ts\nconst a = 1;', ['main/x/gone.ts']],
    ['a block comment', '/** one (formats/gone.ts) */', ['formats/gone.ts']],
    ['a comment opener inside a string', "const glob = 'main/**/*.ts'; // workers/gone.ts", ['workers/gone.ts']],
    ['a quote inside a regular expression', "const q = /[\"']/; // test/gone.test.ts", ['test/gone.test.ts']],
    ['a path in a string only', "const p = 'main/not-a-comment.ts';", []],
    ['a pattern', '// main/plan/** and test/<file>.test.ts', []],
    ['a folder and a sentence end', '// workers/supervise/ holds it; see docs/gone.md.', ['workers/supervise', 'docs/gone.md']],
  ])('should find the paths of %s', (_, source, paths) => {
    expect(commentsOf(source).flatMap(pathsIn)).toEqual(paths);
  });
});
