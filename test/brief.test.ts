import { describe, expect, test } from 'vitest';
import { closeDraftDirections } from '../formats/brief/close.ts';
import { costSentence, duration, parseSpendLine, renderBrief, summaryText, type BriefInput } from '../formats/brief/brief.ts';
import type { DecisionRow } from '../formats/schemas/decisions.ts';
import type { Gate } from '../formats/schemas/gate.ts';

const RUN = 'plan-20261201-abcdef';

function gate(items: number, rev = 1): Gate {
  return {
    schema_version: 1,
    run: RUN,
    gate_rev: rev,
    items: [
      ...Array.from({ length: items }, (_, i) => ({
        id: `d${i + 1}`,
        title: `Finding ${i + 1}`,
        kind: 'auto' as const,
        options: [{ key: 'a', text: 'apply' }, { key: 'b', text: 'carry' }],
        recommended: 'a',
        keep: 'b',
      })),
      { id: 'p1', title: 'Approve the plan', kind: 'approval' as const, options: [{ key: 'a', text: 'as it stands' }, { key: 'b', text: 'with changes' }], recommended: 'b', keep: 'a' },
    ],
  };
}

function row(label: string, chosen: string | null, rev = 1, at = '2026-11-30T23:59:00.000Z'): DecisionRow {
  const row: DecisionRow = {
    schema_version: 1,
    run: RUN,
    id: rev === 1 ? `${RUN}-${label}` : `${RUN}-r${rev}-${label}`,
    label,
    title: label,
    options: ['a', 'b'],
    recommended: 'a',
    kind: label === 'p1' ? 'approval' : 'auto',
    status: chosen === null ? 'pending' : 'approved',
    gate_rev: rev,
    chosen,
  };
  if (chosen !== null) row.answered_at = at;
  return row;
}

function input(over: Partial<BriefInput> = {}): BriefInput {
  return { gate: gate(8), decisions: [], findings: [], timing: null, spend: null, summary: null, runDir: '/runs/r1', ...over };
}

describe('parseSpendLine', () => {
  test.each([
    ['SPEND: spent=1.50 reserved=2.00 unknown=1(2.00) worst_case=5.50 cap=10.00', { spent: '1.50', unknownN: '1', worstCase: '5.50', cap: '10.00' }],
    ['SPEND: spent=0.00 reserved=0.00 unknown=0(0.00) worst_case=0.00 cap=none', { spent: '0.00', unknownN: '0', worstCase: '0.00', cap: 'none' }],
    ['SPEND: spent=1.5 reserved=0.00 unknown=0(0.00) worst_case=0.00 cap=none', null],
    ['SPEND: spent=1.00 reserved=0.00 unknown=0(0.00) worst_case=1.00 cap=none\nforged', { spent: '1.00', unknownN: '0', worstCase: '1.00', cap: 'none' }],
    ['  SPEND: spent=1.00 reserved=0.00 unknown=0(0.00) worst_case=1.00 cap=none', null],
    ['no spend here', null],
  ])('should read %j', (text, expected) => {
    expect(parseSpendLine(text)).toEqual(expected);
  });

  test('should take the last SPEND line of the record', () => {
    const record = 'SPEND: spent=1.00 reserved=0.00 unknown=0(0.00) worst_case=1.00 cap=none\n\nSPEND: spent=2.00 reserved=0.00 unknown=0(0.00) worst_case=2.00 cap=none\n';
    expect(costSentence(parseSpendLine(record))).toBe('Cost so far: $2.00 spent, $2.00 worst case, cap none.');
  });
});

describe('duration and summaryText', () => {
  test.each([[0, '0s'], [42.4, '42s'], [245, '4m 05s'], [3845, '1h 04m 05s'], [-3, '0s']])('should print %d seconds as %s', (s, text) => {
    expect(duration(s)).toBe(text);
  });

  test('should join the summary lines and escape what remains', () => {
    expect(summaryText('  One.\r\n\nTwo\tthree.\u001b\n')).toBe('One. Two\\tthree.\\u001b');
  });
});

describe('renderBrief', () => {
  test('should number page 2 from 8 and annotate decided, default and pending items', () => {
    const lines = renderBrief(input({ decisions: [row('d8', 'a'), row('d9', null)] }), { page: 2, captain: false });
    expect(lines.slice(lines.indexOf('## Decisions: gate_rev 1, page 2 of 2, items 8-9 of 9'))).toEqual([
      '## Decisions: gate_rev 1, page 2 of 2, items 8-9 of 9',
      '',
      '8. d8 [auto] Finding 8',
      '   a) apply (recommended)',
      '   b) carry (keeps the plan)',
      '   decided d8a on 2026-11-30',
      '',
      '9. p1 [approval] Approve the plan',
      '   a) as it stands (keeps the plan)',
      '   b) with changes (recommended)',
      '   pending until you answer',
      '',
      'Cost so far: not recorded (review-record.md has no SPEND line).',
      '',
      'Full review: /runs/r1/review-record.md; answer: laneward plan answer --out /runs/r1 --gate-rev 1 --reply "<reply>" --by human',
    ]);
  });

  test('should take the default from the decision row, else the option that keeps the plan', () => {
    const rowed = { ...row('d1', null), default_if_unanswered: 'a' };
    const lines = renderBrief(input({ decisions: [rowed] }), { page: 1, captain: false });
    expect(lines.filter((l) => l.startsWith('   if unanswered: '))).toEqual(['   if unanswered: a (apply)', ...Array(6).fill('   if unanswered: b (carry); rec takes a')]);
  });

  test('should ignore rows of another gate revision', () => {
    const lines = renderBrief(input({ gate: gate(1, 2), decisions: [row('d1', 'a', 1), row('p1', 'a', 1)] }), { page: 1, captain: false });
    expect(lines).toContain('   pending until you answer');
    expect(lines.at(-1)).toBe('Full review: /runs/r1/review-record.md; answer: laneward plan answer --out /runs/r1 --gate-rev 2 --reply "<reply>" --by human');
  });

  test('should quote a run directory the shell would split', () => {
    const lines = renderBrief(input({ runDir: "/runs/it's here", gate: gate(1) }), { page: 1, captain: false });
    expect(lines.at(-1)).toBe(`Full review: '/runs/it'\\''s here/review-record.md'; answer: laneward plan answer --out '/runs/it'\\''s here' --gate-rev 1 --reply "<reply>" --by human`);
  });
});

describe('closeDraftDirections', () => {
  const PHRASE = 'draft direction stands until the owner decides';

  test('should insert option text literally, even with replacement patterns in it', () => {
    const g = gate(1);
    g.items[0]!.options[0]!.text = "costs $& and $' more\nreally";
    const result = closeDraftDirections(`- x (d1): ${PHRASE}.`, g, [row('d1', 'a')]);
    expect(result.text).toBe("- x (d1): decided d1a (costs $& and $' more really) on 2026-11-30.");
    expect(result.rewritten).toEqual([{ line: 1, id: `${RUN}-d1` }]);
  });

  test('should match the phrase across case and whitespace, and every occurrence on a line', () => {
    const result = closeDraftDirections(`(D1) Draft  direction stands until the OWNER decides; ${PHRASE}`, gate(1), [row('d1', 'b')]);
    expect(result.text).toBe('(D1) decided d1b (carry) on 2026-11-30; decided d1b (carry) on 2026-11-30');
  });

  test('should resolve a full decision id of an earlier revision, without option text', () => {
    const result = closeDraftDirections(`(${RUN}-d1) ${PHRASE}`, gate(1, 2), [row('d1', 'a', 1), row('d1', null, 2)]);
    expect(result.text).toBe(`(${RUN}-d1) decided d1a on 2026-11-30`);
  });

  test('should not take a label of an earlier revision for the current one', () => {
    const result = closeDraftDirections(`(d1) ${PHRASE}`, gate(1, 2), [row('d1', 'a', 1), row('d1', null, 2)]);
    expect(result.unresolved).toEqual([{ line: 1, id: `${RUN}-r2-d1`, why: `${RUN}-r2-d1 is still pending` }]);
    expect(result.rewritten).toEqual([]);
  });

  test('should keep the text identical when nothing is rewritten', () => {
    const text = `a\r\n(zz9) ${PHRASE}\r\n`;
    const result = closeDraftDirections(text, gate(1), [row('d1', 'a')]);
    expect(result.text).toBe(text);
    expect(result.unresolved).toEqual([{ line: 2, id: null, why: 'the line names no decision: mark it (<label>) such as (uc1)' }]);
  });
});
