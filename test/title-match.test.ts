import { describe, expect, test } from 'vitest';
import { jaccardAtLeastHalf, normaliseTitle, titlesMatch, titleWords } from '../formats/consensus/title-match.ts';

describe('normaliseTitle', () => {
  test.each([
    ['SQL Injection in /login', 'sql injection in login'],
    ['  Missing--auth!! check  ', 'missing auth check'],
    ['N+1 query', 'n 1 query'],
    ['a\tb\nc\u0000d', 'a b c d'],
    ['CVE-2024-1234: parser', 'cve 2024 1234 parser'],
    ['Überlauf im PUFFER', 'überlauf im puffer'],
    ['Переполнение БУФЕРА', 'переполнение буфера'],
    // A decomposed accent equals the composed one, and never splits its word.
    ['Cafe\u0301 crash', 'café crash'],
    ['Café crash', 'café crash'],
    ['किताब गुम', 'किताब गुम'],
    ['日本語のタイトル', '日本語のタイトル'],
    ['🔥 hot—path…', 'hot path'],
    ['', ''],
    ['---', ''],
    ['   ', ''],
  ])('should normalise %j to %j', (title, expected) => {
    expect(normaliseTitle(title)).toBe(expected);
  });
});

describe('titleWords', () => {
  test.each([
    ['sql injection in login', ['sql', 'injection', 'login']],
    ['md5 used for a pw', ['md5', 'used', 'for']],
    ['race race race', ['race']],
    ['a bb', []],
    ['2024 12 31', ['2024']],
    // Marks are not letters: कि is one letter and a mark, किताब three letters and two marks.
    ['कि किताब', ['किताब']],
    // A surrogate pair is one letter.
    ['𝒜𝒜 𝒜𝒜𝒜', ['𝒜𝒜𝒜']],
    ['', []],
  ])('should take the 3+ letter words of %j', (normalised, expected) => {
    expect(titleWords(normalised)).toEqual(expected);
  });
});

describe('jaccardAtLeastHalf', () => {
  test.each([
    [2, 3, 3, true], // 2/4
    [3, 5, 5, false], // 3/7
    [1, 1, 2, true], // 1/2
    [1, 2, 2, false], // 1/3
    [0, 0, 0, false], // empty sets never match
    [0, 0, 3, false],
    [3, 3, 3, true],
  ])('should judge shared=%i of sizes %i and %i as %s', (shared, a, b, expected) => {
    expect(jaccardAtLeastHalf(shared, a, b)).toBe(expected);
  });
});

describe('titlesMatch', () => {
  test.each([
    ['SQL injection', 'sql-injection!', true, 'equal normalised forms'],
    ['unused import foo', 'unused import bar', true, 'Jaccard exactly 1/2'],
    ['alpha beta gamma delta', 'alpha beta epsilon zeta', false, 'Jaccard 1/3'],
    ['alpha beta gamma delta echo', 'alpha beta gamma fox golf', false, 'Jaccard 3/7'],
    ['Race condition', 'race condition in worker', true, 'Jaccard 2/3'],
    ['lock', 'lock file', true, 'one of two words: 1/2'],
    ['lock', 'lock file stale', false, 'one of three words: 1/3'],
    ['XSS in UI of app', 'xss in db of app', true, 'short words do not count: {xss, app} both'],
    ['a b', 'A-B', true, 'no 3-letter word, but equal normalised forms'],
    ['a b', 'a c', false, 'no 3-letter word and different forms: empty sets never match'],
    ['', '', false, 'empty titles name nothing'],
    ['---', '!!!', false, 'punctuation only normalises to empty'],
    ['leak leak leak memory', 'memory leak', true, 'repeated words count once'],
    ['leak leak leak', 'leak memory cache', false, 'repetition does not inflate: 1/3'],
    ['CVE-2024-1234 in parser', 'CVE 2024 1234 parser', true, 'digits are words'],
    ['Überlauf im Puffer', 'ÜBERLAUF IM PUFFER', true, 'unicode case'],
    ['Cafe\u0301 crash', 'café crash', true, 'composed and decomposed'],
    ['Überlauf Puffer', 'berlauf Puffer', false, 'a non-ASCII letter is part of its word'],
  ])('should match %j with %j: %s (%s)', (a, b, expected) => {
    expect(titlesMatch(a, b)).toBe(expected);
    expect(titlesMatch(b, a)).toBe(expected);
  });
});
