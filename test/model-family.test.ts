import { describe, expect, test } from 'vitest';
import { BUILTIN_FAMILIES, familiesConflict, modelFamily, parseFamilyTable, type FamilyAnswer } from '../formats/review/model-family.ts';

/** An answer as `family:prefix:source`, so a table row reads as one string. */
const answer = (a: FamilyAnswer): string => `${a.family ?? '-'}:${a.prefix ?? '-'}:${a.source ?? '-'}`;

function table(text: string): Record<string, string> {
  const parsed = parseFamilyTable(text);
  if (!parsed.ok) throw new Error(`expected ${text} to parse, got ${parsed.message}`);
  return parsed.table;
}

describe('BUILTIN_FAMILIES', () => {
  test('should hold exactly the contract table', () => {
    expect({ ...BUILTIN_FAMILIES }).toEqual({
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
    expect(Object.isFrozen(BUILTIN_FAMILIES)).toBe(true);
    expect(Object.getPrototypeOf(BUILTIN_FAMILIES)).toBeNull();
  });

  test.each(Object.entries(BUILTIN_FAMILIES))('should give %s to %s', (prefix, family) => {
    expect(answer(modelFamily(prefix))).toBe(`${family}:${prefix}:builtin`);
    expect(answer(modelFamily(`${prefix.toUpperCase()}-2`))).toBe(`${family}:${prefix}:builtin`);
  });
});

describe('modelFamily', () => {
  test.each([
    ['claude-3-5-sonnet-20241022', 'anthropic:claude:builtin'],
    ['Claude-Opus-4', 'anthropic:claude:builtin'],
    ['gpt-4o', 'openai:gpt:builtin'],
    ['gpt4', 'openai:gpt:builtin'],
    ['GPT-4.1-mini', 'openai:gpt:builtin'],
    ['gpt_4', 'openai:gpt:builtin'],
    ['o1', 'openai:o1:builtin'],
    ['o1-mini', 'openai:o1:builtin'],
    ['o1.5', 'openai:o1:builtin'],
    ['o10', 'openai:o1:builtin'],
    ['o3-pro', 'openai:o3:builtin'],
    ['o4-mini', 'openai:o4:builtin'],
    ['codex-mini-latest', 'openai:codex:builtin'],
    ['gemini-2.5-pro', 'google:gemini:builtin'],
    ['llama3.1:8b', 'meta:llama:builtin'],
    ['mistral-large-latest', 'mistral:mistral:builtin'],
    ['mixtral-8x7b', 'mistral:mixtral:builtin'],
    ['codestral-2501', 'mistral:codestral:builtin'],
    ['grok-4', 'xai:grok:builtin'],
    ['deepseek-r1', 'deepseek:deepseek:builtin'],
    ['qwen2.5-coder:32b', 'alibaba:qwen:builtin'],
    ['  claude-3  ', 'anthropic:claude:builtin'],
  ])('should know %j', (model, expected) => {
    expect(answer(modelFamily(model))).toBe(expected);
  });

  test.each([
    ['openai/gpt-4o', 'openai:gpt:builtin'],
    ['anthropic/claude-3', 'anthropic:claude:builtin'],
    ['models/gemini-pro', 'google:gemini:builtin'],
    ['openrouter/anthropic/claude-3.5-sonnet', 'anthropic:claude:builtin'],
    ['meta-llama/Llama-3.3-70B-Instruct', 'meta:llama:builtin'],
    ['gpt/claude-3', 'anthropic:claude:builtin'],
    ['openai/', '-:-:-'],
  ])('should drop the provider path of %j', (model, expected) => {
    expect(answer(modelFamily(model))).toBe(expected);
  });

  test.each([
    ['o1x'],
    ['gptx'],
    ['claudette'],
    ['chatgpt-4o-latest'],
    ['phi-3'],
    ['anthropic.claude-v2'],
    ['llam'],
    [''],
    ['   '],
    ['constructor'],
    ['__proto__'],
    ['toString'],
  ])('should give %j no family', (model) => {
    expect(modelFamily(model)).toEqual({ family: null, prefix: null, source: null });
  });

  test.each([
    ['a file entry overrides the builtin prefix', '{"grok":"someone"}', 'grok-4', 'someone:grok:file'],
    ['a file adds a prefix', '{"phi":"microsoft"}', 'phi-3-mini', 'microsoft:phi:file'],
    ['a longer file prefix wins', '{"gemini-nano":"android"}', 'gemini-nano-2', 'android:gemini-nano:file'],
    ['a shorter builtin still answers the rest', '{"gemini-nano":"android"}', 'gemini-2.5-pro', 'google:gemini:builtin'],
    ['a longer builtin prefix beats a shorter file one', '{"g":"gee"}', 'gpt-4o', 'openai:gpt:builtin'],
    ['a prefix ending in a separator needs no boundary', '{"gpt-":"other"}', 'gpt-4o', 'other:gpt-:file'],
    ['a separator prefix does not take the bare name', '{"gpt-":"other"}', 'gpt4', 'openai:gpt:builtin'],
    ['file keys and families are case-insensitive', '{"PHI":"Microsoft"}', 'Phi-3', 'microsoft:phi:file'],
    ['a __proto__ key is plain data', '{"__proto__":"evil"}', '__proto__-1', 'evil:__proto__:file'],
  ])('should extend the table: %s', (_name, text, model, expected) => {
    expect(answer(modelFamily(model, table(text)))).toBe(expected);
  });

  test('should normalise a table passed by hand and ignore non-string families', () => {
    const extra = { ' PHI ': 'Microsoft', grok: 7 } as unknown as Record<string, string>;
    expect(answer(modelFamily('phi-3', extra))).toBe('microsoft:phi:file');
    expect(answer(modelFamily('grok-4', extra))).toBe('xai:grok:builtin');
  });
});

describe('familiesConflict', () => {
  test.each([
    ['claude-3', 'claude-opus-4', true],
    ['gpt-4o', 'o3', true],
    ['anthropic/claude-3', 'claude-3', true],
    ['claude-3', 'gpt-4o', false],
    ['phi-3', 'claude-3', false],
    ['claude-3', 'phi-3', false],
    ['phi-3', 'phi-3', false],
  ])('should judge %j against %j as %s', (a, b, expected) => {
    expect(familiesConflict(modelFamily(a), modelFamily(b))).toBe(expected);
  });

  test('should compare a file family with a builtin one by name', () => {
    const extra = table('{"azure-gpt":"openai"}');
    expect(familiesConflict(modelFamily('azure-gpt-4o', extra), modelFamily('gpt-4o', extra))).toBe(true);
  });
});

describe('parseFamilyTable', () => {
  test.each([
    ['{}', {}],
    ['{"phi":"microsoft"}', { phi: 'microsoft' }],
    [' { "PHI " : " Microsoft " } ', { phi: 'microsoft' }],
    ['{"Phi":"a","phi":"A"}', { phi: 'a' }],
    ['{"gpt-":"other","o1":"x"}', { 'gpt-': 'other', o1: 'x' }],
  ])('should read %j', (text, expected) => {
    const parsed = table(text);
    expect({ ...parsed }).toEqual(expected);
    expect(Object.getPrototypeOf(parsed)).toBeNull();
  });

  test('should keep a __proto__ key as data and pollute nothing', () => {
    const parsed = table('{"__proto__":"evil","constructor":"x"}');
    expect(Object.getPrototypeOf(parsed)).toBeNull();
    expect(Object.keys(parsed)).toEqual(['__proto__', 'constructor']);
    expect(parsed['__proto__']).toBe('evil');
    expect(({} as Record<string, unknown>)['evil']).toBeUndefined();
    expect(Object.getPrototypeOf({})).toBe(Object.prototype);
  });

  test.each([
    ['', /^not JSON: /],
    ['{"phi":', /^not JSON: /],
    ['[]', /^expected an object of model prefix to family, got an array$/],
    ['null', /^expected an object of model prefix to family, got null$/],
    ['"phi"', /^expected an object of model prefix to family, got a string$/],
    ['42', /^expected an object of model prefix to family, got a number$/],
    ['{"phi":7}', /^prefix "phi": the family must be a string, got a number$/],
    ['{"phi":null}', /^prefix "phi": the family must be a string, got null$/],
    ['{"phi":["microsoft"]}', /^prefix "phi": the family must be a string, got an array$/],
    ['{"phi":"  "}', /^prefix "phi": the family must not be empty$/],
    ['{"":"x"}', /^prefix "": a prefix must not be empty$/],
    ['{"  ":"x"}', /^prefix " {2}": a prefix must not be empty$/],
    ['{"openai/gpt":"x"}', /^prefix "openai\/gpt": a prefix must not contain '\/'/],
    ['{"my model":"x"}', /^prefix "my model": a prefix must not contain whitespace$/],
    ['{"Phi":"a","phi":"b"}', /^prefix "phi": names family "b" but the same prefix in other case names "a"$/],
  ])('should refuse %j', (text, message) => {
    const parsed = parseFamilyTable(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.message).toMatch(message);
  });
});
