/**
 * When two finding titles name the same problem (the contract's consensus rule): their
 * normalised forms are equal, or their sets of words of three or more letters have a
 * Jaccard index of at least 0.5.
 */

// Letters, combining marks and digits of any script are the alphanumerics: "Überlauf" and
// "переполнение" keep their words, and a mark (a Devanagari vowel sign, a decomposed accent)
// never splits the word it belongs to.
const NON_ALPHANUMERIC = /[^\p{L}\p{M}\p{N}]+/gu;
const MARK = /\p{M}/gu;
const HAS_MARK = /\p{M}/u;

/**
 * Lowercase, NFC (so a decomposed accent equals the composed one), every run of
 * non-alphanumerics one space, trimmed.
 */
export function normaliseTitle(title: string): string {
  return title.toLowerCase().normalize('NFC').replace(NON_ALPHANUMERIC, ' ').trim();
}

/**
 * The distinct words of a normalised title that have three or more letters, in first
 * appearance order. Digits count as letters ("md5", "2024"); combining marks do not.
 */
export function titleWords(normalised: string): string[] {
  if (normalised === '') return [];
  const seen = new Set<string>();
  for (const word of normalised.split(' ')) {
    if (!seen.has(word) && letterCount(word) >= 3) seen.add(word);
  }
  return [...seen];
}

function letterCount(word: string): number {
  // Hint: most words carry no mark; test before replacing, and count without spreading.
  const bare = HAS_MARK.test(word) ? word.replace(MARK, '') : word;
  let count = 0;
  for (let i = 0; i < bare.length; i += 1) {
    const code = bare.charCodeAt(i);
    // A surrogate pair is one letter.
    if (code < 0xdc00 || code > 0xdfff) count += 1;
  }
  return count;
}

/** True when `shared` words of sets sized `a` and `b` reach a Jaccard index of 0.5. */
export function jaccardAtLeastHalf(shared: number, a: number, b: number): boolean {
  const union = a + b - shared;
  // Integer arithmetic: no rounding at exactly one half. An empty union never matches.
  return union > 0 && 2 * shared >= union;
}

/**
 * The contract's title match. An empty normalised title ("", "---") matches nothing: it
 * names no problem, so two of them are not the same problem.
 */
export function titlesMatch(a: string, b: string): boolean {
  const na = normaliseTitle(a);
  const nb = normaliseTitle(b);
  if (na !== '' && na === nb) return true;
  const wa = titleWords(na);
  const wb = new Set(titleWords(nb));
  let shared = 0;
  for (const word of wa) if (wb.has(word)) shared += 1;
  return jaccardAtLeastHalf(shared, wa.length, wb.size);
}
