import { describe, expect, test } from 'vitest';
import { decisionId, decisionRows } from '../formats/gate/decisions.ts';
import { gateAllItems, gatePageCount, gatePageItems, GATE_REPLY_LINE, renderGatePage } from '../formats/gate/render.ts';
import { answerGate, parseReply, tokenizeReply, type ParsedReply } from '../formats/gate/reply.ts';
import { checkSchema } from '../formats/schemas/check.ts';
import { decisionSchema } from '../formats/schemas/decisions.ts';
import type { Gate, GateItem } from '../formats/schemas/gate.ts';

const ab = [
  { key: 'a', text: 'first' },
  { key: 'b', text: 'second' },
];

/** d1 auto rec a; d2 auto rec b keep a; uc1 approval rec b; p1 approval rec b (no keep); d3 approval rec a keep b. */
const ITEMS: GateItem[] = [
  { id: 'd1', title: 'One', kind: 'auto', options: ab, recommended: 'a', phase: 'eng' },
  { id: 'd2', title: 'Two', kind: 'auto', options: [...ab, { key: 'c', text: 'third' }], recommended: 'b', keep: 'a' },
  { id: 'uc1', title: 'Challenge', kind: 'approval', options: ab, recommended: 'b' },
  { id: 'p1', title: 'Plan', kind: 'approval', options: ab, recommended: 'b' },
  { id: 'd3', title: 'Three', kind: 'approval', options: ab, recommended: 'a', keep: 'b' },
];

const gate = (gateRev = 1, items: GateItem[] = ITEMS): Gate => ({ schema_version: 1, run: 'r7', gate_rev: gateRev, items });

/** One choice as `id:chosen:source:status[:named]`, so a table row reads as one string. */
function summary(parsed: ParsedReply): string[] {
  return parsed.choices.map((c) => `${c.id}:${c.chosen ?? '-'}:${c.source}:${c.status}${c.owner_named ? ':named' : ''}`);
}

function parsedOk(reply: string, items: GateItem[] = ITEMS): ParsedReply {
  const outcome = parseReply(items, reply);
  if (!outcome.ok) throw new Error(`expected ${JSON.stringify(reply)} to parse, got ${outcome.detail}`);
  return outcome;
}

describe('tokenizeReply', () => {
  test.each([
    ['D1:B', ['d1b']],
    ['d1 b', ['d1b']],
    ['d1=b, d2;c', ['d1b', 'd2c']],
    ['d1) b  uc1 a', ['d1b', 'uc1a']],
    ['REC', ['rec']],
    ['All Except D1 B', ['all', 'except', 'd1b']],
    ['As-Is', ['as-is']],
    ['7 a', ['7a']],
    ['d1 b c', ['d1b', 'c']],
    ['d1b b', ['d1b', 'b']],
    [' ,; :=) ', []],
  ])('should tokenize %j', (reply, tokens) => {
    expect(tokenizeReply(reply)).toEqual(tokens);
  });
});

describe('parseReply', () => {
  test.each([
    ['rec', 'rec', ['d1:a:rec:approved', 'd2:b:rec:approved', 'uc1:b:rec:approved', 'p1:b:rec:approved', 'd3:a:rec:approved']],
    ['ALL', 'rec', ['d1:a:rec:approved', 'd2:b:rec:approved', 'uc1:b:rec:approved', 'p1:b:rec:approved', 'd3:a:rec:approved']],
    ['rec except d1b', 'rec_except', ['d1:b:pick:overridden:named', 'd2:b:rec:approved', 'uc1:b:rec:approved', 'p1:b:rec:approved', 'd3:a:rec:approved']],
    ['all except D1:B, uc1 b', 'rec_except', ['d1:b:pick:overridden:named', 'd2:b:rec:approved', 'uc1:b:pick:approved:named', 'p1:b:rec:approved', 'd3:a:rec:approved']],
    ['as-is', 'as_is', ['d1:a:default:approved', 'd2:a:keep:overridden', 'uc1:-:pending:pending', 'p1:a:keep:overridden', 'd3:b:keep:overridden']],
    ['AS-IS', 'as_is', ['d1:a:default:approved', 'd2:a:keep:overridden', 'uc1:-:pending:pending', 'p1:a:keep:overridden', 'd3:b:keep:overridden']],
    ['d1b uc1a', 'tokens', ['d1:b:pick:overridden:named', 'd2:b:default:approved', 'uc1:a:pick:overridden:named', 'p1:-:pending:pending', 'd3:-:pending:pending']],
    ['D1 B, d1b', 'tokens', ['d1:b:pick:overridden:named', 'd2:b:default:approved', 'uc1:-:pending:pending', 'p1:-:pending:pending', 'd3:-:pending:pending']],
    ['d2=c;p1:b;d3 a;uc1)b', 'tokens', ['d1:a:default:approved', 'd2:c:pick:overridden:named', 'uc1:b:pick:approved:named', 'p1:b:pick:approved:named', 'd3:a:pick:approved:named']],
  ])('should parse %j', (reply, mode, choices) => {
    const parsed = parsedOk(reply);
    expect(parsed.mode).toBe(mode);
    expect(summary(parsed)).toEqual(choices);
  });

  test.each([
    ['', 'empty reply'],
    ['  ,;  ', 'separators only'],
    ['yes', 'bare yes'],
    ['no', 'bare no'],
    ['Y', 'bare y'],
    ['n', 'bare n'],
    ['OK', 'bare ok'],
    ['d1b yes', 'yes among picks'],
    ['d9a', 'no such item'],
    ['x1 a', 'no such item (joined)'],
    ['d1z', 'no such option'],
    ['d2 d', 'no such option (joined)'],
    ['d1', 'an id without an option'],
    ['b', 'a lone letter'],
    ['approve', 'a word'],
    ['d1a d1b', 'two different picks for one item'],
    ['d1 a, D1:B', 'two different picks, joined'],
    ['rec d1b', 'rec with a stray token'],
    ['all yes', 'all with a stray token'],
    ['rec rec', 'rec twice'],
    ['rec except', 'except with nothing after it'],
    ['ALL EXCEPT', 'all except with nothing after it'],
    ['rec except d9a', 'except naming no item'],
    ['rec except d1a d1b', 'except with two different picks'],
    ['rec except rec', 'except followed by rec'],
    ['except d1b', 'except without rec'],
    ['as-is d1a', 'as-is with a stray token'],
    ['as-is as-is', 'as-is twice'],
    ['as is', 'as-is without its hyphen'],
    ['d1b rec', 'rec after a pick'],
    ['d1b as-is', 'as-is after a pick'],
  ])('should refuse %j (%s)', (reply) => {
    const outcome = parseReply(ITEMS, reply);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.code).toBe('GATE_REPLY_UNPARSED');
  });

  test('should give p1 its keep option under as-is when it has one', () => {
    const items: GateItem[] = [{ id: 'p1', title: 'Plan', kind: 'approval', options: [...ab, { key: 'c', text: 'third' }], recommended: 'b', keep: 'c' }];
    expect(summary(parsedOk('as-is', items))).toEqual(['p1:c:keep:overridden']);
  });

  test('should leave p1 unanswered under as-is when it has neither keep nor an option a', () => {
    const items: GateItem[] = [{ id: 'p1', title: 'Plan', kind: 'approval', options: [{ key: 'x', text: 'x' }, { key: 'y', text: 'y' }], recommended: 'x' }];
    expect(summary(parsedOk('as-is', items))).toEqual(['p1:-:pending:pending']);
  });

  test('should treat only the item named p1 as the plan approval under as-is', () => {
    const items: GateItem[] = [{ id: 'p2', title: 'Other', kind: 'approval', options: ab, recommended: 'b' }];
    expect(summary(parsedOk('as-is', items))).toEqual(['p2:-:pending:pending']);
  });
});

describe('answerGate', () => {
  test('should parse a reply bound to the current gate_rev', () => {
    const outcome = answerGate(gate(2), 'rec', 2);
    expect(outcome.ok && outcome.mode).toBe('rec');
  });

  test.each([
    [1, 2, 'rec'],
    [3, 2, 'rec'],
    [1, 2, 'yes'],
  ])('should refuse gate_rev %i against a gate at %i as GATE_REV_STALE (reply %j)', (replyRev, gateRev, reply) => {
    const outcome = answerGate(gate(gateRev), reply, replyRev);
    expect(outcome.ok ? 'ok' : outcome.code).toBe('GATE_REV_STALE');
  });

  test('should refuse an unparsed reply at the current gate_rev as GATE_REPLY_UNPARSED', () => {
    const outcome = answerGate(gate(1), 'yes', 1);
    expect(outcome.ok ? 'ok' : outcome.code).toBe('GATE_REPLY_UNPARSED');
  });
});

const many = (n: number): GateItem[] =>
  Array.from({ length: n }, (_, i) => ({ id: `d${i + 1}`, title: `T${i + 1}`, kind: 'auto' as const, options: ab, recommended: 'a' }));

describe('gate-render', () => {
  test.each([
    [1, 1],
    [7, 1],
    [8, 2],
    [14, 2],
    [15, 3],
  ])('should put %i items on %i page(s)', (items, pages) => {
    expect(gatePageCount(gate(1, many(items)))).toBe(pages);
  });

  test('should number items globally across pages with ids unchanged', () => {
    const g = gate(1, many(16));
    expect(gatePageItems(g, 1).map((i) => `${i.number}:${i.id}`)).toEqual(['1:d1', '2:d2', '3:d3', '4:d4', '5:d5', '6:d6', '7:d7']);
    expect(gatePageItems(g, 2).map((i) => i.number)).toEqual([8, 9, 10, 11, 12, 13, 14]);
    expect(gatePageItems(g, 3).map((i) => `${i.number}:${i.id}`)).toEqual(['15:d15', '16:d16']);
    expect(gatePageItems(g, 0)).toEqual([]);
    expect(gatePageItems(g, 4)).toEqual([]);
    expect(gateAllItems(g).map((i) => i.number)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
  });

  test('should render the header, item blocks, reply grammar and answer command', () => {
    expect(renderGatePage(gate(3), 1, 'runs/r7/gate.json')).toEqual([
      'GATE: run=r7 gate_rev=3 page=1/1 items=5',
      '1. d1 [auto] One',
      '   a) first (recommended)',
      '   b) second',
      '   if unanswered: a',
      '2. d2 [auto] Two',
      '   a) first (keeps the plan)',
      '   b) second (recommended)',
      '   c) third',
      '   if unanswered: b',
      '3. uc1 [approval] Challenge',
      '   a) first',
      '   b) second (recommended)',
      '4. p1 [approval] Plan',
      '   a) first',
      '   b) second (recommended)',
      '5. d3 [approval] Three',
      '   a) first (recommended)',
      '   b) second (keeps the plan)',
      GATE_REPLY_LINE,
      'ANSWER: laneward gate parse runs/r7/gate.json --reply "<reply>" --gate-rev 3',
    ]);
    expect(GATE_REPLY_LINE).toBe('REPLY: rec | rec except <id><option>... | as-is | <id><option>... (bare yes/no is refused)');
  });

  test('should keep a multi-line title on its one line and quote a path with spaces', () => {
    const items: GateItem[] = [{ id: 'd1', title: 'Line one\nline two', kind: 'approval', options: ab, recommended: 'a', keep: 'a' }];
    const lines = renderGatePage(gate(1, items), 1, 'my dir/gate.json');
    expect(lines[1]).toBe('1. d1 [approval] Line one line two');
    expect(lines[2]).toBe('   a) first (recommended) (keeps the plan)');
    expect(lines.at(-1)).toBe(`ANSWER: laneward gate parse 'my dir/gate.json' --reply "<reply>" --gate-rev 1`);
  });

  test('should start page 2 at item 8', () => {
    const lines = renderGatePage(gate(1, many(9)), 2, 'gate.json');
    expect(lines[0]).toBe('GATE: run=r7 gate_rev=1 page=2/2 items=9');
    expect(lines[1]).toBe('8. d8 [auto] T8');
    expect(lines.filter((line) => /^\d+\. /.test(line))).toEqual(['8. d8 [auto] T8', '9. d9 [auto] T9']);
  });
});

describe('gate-decisions', () => {
  const stamp = { reply: 'rec except D1:B', at: '2025-01-02T03:04:05.000Z', by: 'owner' };

  test.each([
    ['r7', 1, 'd3', 'r7-d3'],
    ['r7', 1, 'UC1', 'r7-uc1'],
    ['r7', 2, 'd3', 'r7-r2-d3'],
    ['run-x', 12, 'p1', 'run-x-r12-p1'],
  ])('should bind run %j rev %i label %j as %j', (run, rev, label, id) => {
    expect(decisionId(run, rev, label)).toBe(id);
  });

  test.each(['rec', 'rec except d1b', 'as-is', 'd1b uc1a', 'd2c'])('should write schema-valid rows for %j', (reply) => {
    for (const rev of [1, 2]) {
      const rows = decisionRows(gate(rev), parsedOk(reply), { ...stamp, reply });
      expect(rows).toHaveLength(ITEMS.length);
      for (const row of rows) expect(checkSchema(decisionSchema, row, 'decisions.jsonl')).toBeUndefined();
    }
  });

  test('should fill every field from the gate, the choice and the stamp', () => {
    const rows = decisionRows(gate(1), parsedOk('rec except D1:B'), stamp);
    expect(rows[0]).toEqual({
      schema_version: 1,
      run: 'r7',
      id: 'r7-d1',
      label: 'd1',
      title: 'One',
      options: ['a', 'b'],
      recommended: 'a',
      kind: 'auto',
      status: 'overridden',
      gate_rev: 1,
      default_if_unanswered: 'a',
      phase: 'eng',
      chosen: 'b',
      reply: 'rec except D1:B',
      owner_mode: 'rec_except',
      owner_named: true,
      answered_at: '2025-01-02T03:04:05.000Z',
      answered_by: 'owner',
    });
    expect(rows[2]).toMatchObject({ id: 'r7-uc1', kind: 'approval', default_if_unanswered: null, status: 'approved', owner_named: false });
    expect(rows[2]).not.toHaveProperty('phase');
  });

  test('should id rows of a reopened gate with the revision and leave pending rows unanswered', () => {
    const rows = decisionRows(gate(2), parsedOk('d1b'), { reply: 'd1b', at: stamp.at });
    expect(rows.map((row) => row.id)).toEqual(['r7-r2-d1', 'r7-r2-d2', 'r7-r2-uc1', 'r7-r2-p1', 'r7-r2-d3']);
    expect(rows.map((row) => row.status)).toEqual(['overridden', 'approved', 'pending', 'pending', 'pending']);
    const pending = rows[2]!;
    expect(pending.chosen).toBeNull();
    expect(pending).not.toHaveProperty('answered_at');
    expect(rows[1]).toHaveProperty('answered_at', stamp.at);
    for (const row of rows) expect(row).not.toHaveProperty('answered_by');
  });
});
