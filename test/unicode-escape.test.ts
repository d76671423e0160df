import { describe, expect, test } from 'vitest';
import { escapeHtml } from '../formats/console/view.ts';
import { trailCell } from '../formats/trail/tsv.ts';
import { jsonLine, oneLine, visibleText } from '../formats/text/one-line.ts';
import { statusLines } from '../main/cli/crew-console.ts';
import { laneLine } from '../main/cli/crew-lines.ts';
import { laneCost } from '../main/crew/lane-cost.ts';
import { newLane } from '../formats/crew/record.ts';
import { crewSnapshot } from './helpers/crew-source.ts';

// The class every printed line, cell and page escapes: Unicode Cc, Cf, Zl, Zp and lone
// surrogates, by category (a list of code points misses the next one).
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;

/** One character of each kind the old lists missed, and some they had. */
const CHARACTERS: [string, string][] = [
  ['U+200B zero width space (Cf)', '\u200b'],
  ['U+200D zero width joiner (Cf)', '\u200d'],
  ['U+FEFF byte order mark (Cf)', '\ufeff'],
  ['U+00AD soft hyphen (Cf)', '\u00ad'],
  ['U+2060 word joiner (Cf)', '\u2060'],
  ['U+2064 invisible plus (Cf)', '\u2064'],
  ['U+180E Mongolian vowel separator (Cf)', '\u180e'],
  ['U+FFF9 interlinear annotation anchor (Cf)', '\ufff9'],
  ['U+E0041 tag latin capital A (Cf, astral)', '\u{e0041}'],
  ['a lone high surrogate (Cs)', '\ud800'],
  ['a lone low surrogate (Cs)', '\udc00'],
  ['U+061C Arabic letter mark (Cf)', '\u061c'],
  ['U+202E right-to-left override (Cf)', '\u202e'],
  ['U+2028 line separator (Zl)', '\u2028'],
  ['U+2029 paragraph separator (Zp)', '\u2029'],
  ['U+0085 next line (Cc)', '\u0085'],
  ['ESC (Cc)', '\u001b'],
];

describe('oneLine', () => {
  test.each(CHARACTERS)('should escape %s as JSON does, idempotently', (_, c) => {
    const escaped = oneLine(`a${c}b`);
    expect(escaped).not.toMatch(UNSAFE);
    expect(JSON.parse(`"${escaped}"`)).toBe(`a${c}b`);
    expect(oneLine(escaped)).toBe(escaped);
  });

  test('should leave printable text as it is, emoji and wide characters included', () => {
    expect(oneLine('lane-1 漢字 é 😀 ≤ 5 ms')).toBe('lane-1 漢字 é 😀 ≤ 5 ms');
  });
});

describe('jsonLine', () => {
  test.each(CHARACTERS)('should escape %s and parse back to the same value', (_, c) => {
    const line = jsonLine({ lane: `a${c}b` });
    expect(line).not.toMatch(UNSAFE);
    expect(JSON.parse(line)).toEqual({ lane: `a${c}b` });
  });
});

describe('visibleText', () => {
  test.each(CHARACTERS)('should write %s out and keep line feeds and tabs', (_, c) => {
    const shown = visibleText(`one\ttab${c}\ntwo`);
    expect(shown.replace(/[\n\t]/g, '')).not.toMatch(UNSAFE);
    expect(shown.split('\n')).toHaveLength(2);
    expect(shown).toContain('\t');
  });
});

describe('escapeHtml', () => {
  test.each(CHARACTERS)('should write %s out as \\uXXXX text', (_, c) => {
    const html = escapeHtml(`<a${c}b>`);
    expect(html).not.toMatch(UNSAFE);
    expect(html).toBe(`&lt;a${oneLine(c)}b&gt;`);
  });

  test('should keep line feeds and tabs, which HTML shows as white space', () => {
    expect(escapeHtml('a\nb\tc')).toBe('a\nb\tc');
  });
});

describe('trailCell', () => {
  test.each(CHARACTERS)('should escape %s in a cell', (_, c) => {
    expect(trailCell(`why${c}not`)).not.toMatch(UNSAFE);
  });
});

describe('crew lines', () => {
  test.each(CHARACTERS)('should escape %s in a CREW_LANE line', (_, c) => {
    const lane = { ...newLane('nightly', 'l1', `/runs/l${c}1`, '2026-01-01T00:00:00.000Z'), stage: 'failed' as const, code: 'CHILD_FAILED', detail: `it said ${c}done`, branch: `b${c}`, head: 'abc' };
    const line = laneLine(lane, `laneward crew run crew${c}.json --retry-failed`, { cost: laneCost(lane, null) });
    expect(line).not.toMatch(UNSAFE);
    expect(line).toMatch(/^CREW_LANE: lane=l1 status=failed code=CHILD_FAILED /);
  });

  test.each(CHARACTERS)('should escape %s in CREW_STATUS and CREW_NEEDS lines', (_, c) => {
    const s = crewSnapshot([{ id: `l${c}1`, state: 'failed', attempts: 1, code: 'CHILD_FAILED', detail: `x${c}y` }], { crew: `n${c}` });
    const lines = statusLines(s);
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const line of lines) expect(line).not.toMatch(UNSAFE);
  });
});
