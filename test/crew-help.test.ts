import { describe, expect, test } from 'vitest';
import { crewFileSchema, DEFAULT_RESERVE_USD } from '../formats/crew/file.ts';
import { CREW_HELP } from '../main/cli/crew.ts';

/** Every key of every object the crew file schema allows, at any depth (runners' presets and prices included). */
function fieldNames(schema: unknown): Set<string> {
  const names = new Set<string>();
  const seen = new Set<unknown>();
  const walk = (s: unknown): void => {
    if (s === null || typeof s !== 'object' || seen.has(s)) return;
    seen.add(s);
    const node = s as { entries?: Record<string, unknown>; options?: unknown[]; pipe?: unknown[]; wrapped?: unknown; item?: unknown; value?: unknown };
    for (const [name, inner] of Object.entries(node.entries ?? {})) {
      names.add(name);
      walk(inner);
    }
    for (const inner of [node.wrapped, node.item, node.value, ...(node.options ?? []), ...(node.pipe ?? [])]) walk(inner);
  };
  walk(schema);
  return names;
}

describe('laneward crew --help', () => {
  test('should document every field of the crew file, by its quoted name', () => {
    const names = [...fieldNames(crewFileSchema)];
    // The walk reaches the nested objects: a preset runner's fields and a price's.
    expect(names).toEqual(expect.arrayContaining(['preset', 'bin', 'env', 'args', 'cached_input', 'max_turn_bytes']));
    expect(names.filter((name) => !CREW_HELP.includes(`"${name}"`))).toEqual([]);
  });

  // The cap is the crew's, over every call, and what a call holds while it runs or once its
  // cost is unknown is its reservation: one paragraph, with the default the schema gives.
  test('should say what spend_cap_usd caps and what a call reserves, with the schema default and the code of a refusal', () => {
    const paragraph = CREW_HELP.slice(CREW_HELP.indexOf('"spend_cap_usd" caps'), CREW_HELP.indexOf('SPEND_CAP_EXCEEDED.') + 'SPEND_CAP_EXCEEDED.'.length);
    expect(paragraph.startsWith('"spend_cap_usd" caps the whole crew (every call of every lane')).toBe(true);
    expect(paragraph).toContain(`("reserve_usd" each,\ndefault ${DEFAULT_RESERVE_USD.toFixed(2)})`);
    expect(paragraph).toContain('unknown cost (counted at "reserve_usd" for good)');
    expect(paragraph.endsWith('or is SPEND_CAP_EXCEEDED.')).toBe(true);
  });
});
