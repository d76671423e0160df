/**
 * Which model family a model id belongs to, so two reviewer voices of one family can be
 * refused (`MODEL_FAMILY_CONFLICT`). A built-in prefix table, extended by the JSON file
 * named in `LANEWARD_MODEL_FAMILIES`.
 */

function table(entries: Record<string, string>): Readonly<Record<string, string>> {
  // A null prototype: `constructor` or `__proto__` is never a prefix by inheritance.
  return Object.freeze(Object.assign(Object.create(null) as Record<string, string>, entries));
}

/** Prefix -> family (the contract's table). */
export const BUILTIN_FAMILIES: Readonly<Record<string, string>> = table({
  claude: 'anthropic',
  gpt: 'openai',
  o1: 'openai',
  o3: 'openai',
  o4: 'openai',
  codex: 'openai',
  gemini: 'google',
  llama: 'meta',
  mistral: 'mistral',
  mixtral: 'mistral',
  codestral: 'mistral',
  grok: 'xai',
  deepseek: 'deepseek',
  qwen: 'alibaba',
});

export interface FamilyAnswer {
  readonly family: string | null;
  /** The table prefix that matched. */
  readonly prefix: string | null;
  readonly source: 'builtin' | 'file' | null;
}

const UNKNOWN: FamilyAnswer = Object.freeze({ family: null, prefix: null, source: null });

/** What may follow a prefix inside a model id: a version digit or a separator. */
const BOUNDARY = /[0-9\-._:]/;
const SEPARATOR = /[\-._:]/;

/**
 * The family of `model`. Case-insensitive; a provider path is dropped (`openai/gpt-4o`,
 * `models/gemini-pro`: only the last `/` segment is matched). The longest prefix wins, and
 * a prefix matches only at a boundary: the id ends there, or a digit or one of `- . _ :`
 * follows (`o1` matches `o1`, `o1-mini`, `o1.5`; not `o1x`; `gpt` matches `gpt4`, not
 * `gptx`). A prefix that itself ends in a separator (`gpt-`) needs no further boundary.
 * `extra` (a parsed family file) overrides the built-in entry for the same prefix.
 */
export function modelFamily(model: string, extra?: Readonly<Record<string, string>>): FamilyAnswer {
  const name = lastSegment(model.trim().toLowerCase());
  if (name === '') return UNKNOWN;
  const fromFile = new Map<string, string>();
  if (extra !== undefined) {
    for (const key of Object.keys(extra)) {
      const family = extra[key];
      if (typeof family === 'string') fromFile.set(key.trim().toLowerCase(), family.trim().toLowerCase());
    }
  }
  // Hint: one lookup per possible prefix length, longest first, instead of a scan of both tables.
  for (let end = name.length; end > 0; end -= 1) {
    const prefix = name.slice(0, end);
    if (!atBoundary(name, prefix)) continue;
    const file = fromFile.get(prefix);
    if (file !== undefined && file !== '') return { family: file, prefix, source: 'file' };
    if (Object.hasOwn(BUILTIN_FAMILIES, prefix)) return { family: BUILTIN_FAMILIES[prefix] ?? null, prefix, source: 'builtin' };
  }
  return UNKNOWN;
}

function lastSegment(model: string): string {
  const slash = model.lastIndexOf('/');
  return slash < 0 ? model : model.slice(slash + 1);
}

function atBoundary(name: string, prefix: string): boolean {
  if (name.length === prefix.length) return true;
  return SEPARATOR.test(prefix.charAt(prefix.length - 1)) || BOUNDARY.test(name.charAt(prefix.length));
}

/** Two voices conflict when both families are known and equal; an unknown one never does. */
export function familiesConflict(a: FamilyAnswer, b: FamilyAnswer): boolean {
  return a.family !== null && b.family !== null && a.family === b.family;
}

export type FamilyTableResult = { ok: true; table: Record<string, string> } | { ok: false; message: string };

/**
 * Reads the `LANEWARD_MODEL_FAMILIES` file: one JSON object of prefix -> family. Prefixes
 * and families are trimmed and lowercased; a prefix must be non-empty, without `/` (the
 * provider path is dropped before matching, so it could never match) or whitespace; a
 * family must be a non-empty string. Two prefixes equal after lowercasing must name one
 * family. The table has a null prototype, so a `__proto__` key is plain data.
 */
export function parseFamilyTable(text: string): FamilyTableResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return { ok: false, message: `not JSON: ${detail}` };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { ok: false, message: `expected an object of model prefix to family, got ${kindOf(parsed)}` };
  }
  const out = Object.create(null) as Record<string, string>;
  for (const [rawKey, rawValue] of Object.entries(parsed)) {
    const key = rawKey.trim().toLowerCase();
    const where = `prefix ${JSON.stringify(rawKey)}`;
    if (key === '') return { ok: false, message: `${where}: a prefix must not be empty` };
    if (key.includes('/')) return { ok: false, message: `${where}: a prefix must not contain '/' (the provider path is dropped before matching)` };
    if (/\s/.test(key)) return { ok: false, message: `${where}: a prefix must not contain whitespace` };
    if (typeof rawValue !== 'string') return { ok: false, message: `${where}: the family must be a string, got ${kindOf(rawValue)}` };
    const family = rawValue.trim().toLowerCase();
    if (family === '') return { ok: false, message: `${where}: the family must not be empty` };
    const earlier = out[key];
    if (earlier !== undefined && earlier !== family) {
      return { ok: false, message: `${where}: names family ${JSON.stringify(family)} but the same prefix in other case names ${JSON.stringify(earlier)}` };
    }
    out[key] = family;
  }
  return { ok: true, table: out };
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
