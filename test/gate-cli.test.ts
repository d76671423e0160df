import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { checkSchema } from '../formats/schemas/check.ts';
import { decisionSchema } from '../formats/schemas/decisions.ts';
import { gateSchema } from '../formats/schemas/gate.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'dist', 'laneward.cjs');

let dir = '';
const at = (name: string) => join(dir, name);

interface Ran {
  code: number | null;
  out: string[];
  err: string[];
}

/** Runs the built bundle as a child, the way a parent lane would. */
function gate(...args: string[]): Ran {
  const ran = spawnSync(process.execPath, [BIN, 'gate', ...args], { cwd: dir, encoding: 'utf8' });
  const lines = (text: string) => (text === '' ? [] : text.replace(/\n$/, '').split('\n'));
  return { code: ran.status, out: lines(ran.stdout), err: lines(ran.stderr) };
}

const ab = [
  { key: 'a', text: 'keep as planned' },
  { key: 'b', text: 'change it' },
];
/** Ten items, so two pages: d1..d9 alternate auto/approval, then p1. d2 keeps with a. */
const ITEMS = [
  ...Array.from({ length: 9 }, (_, i) => ({
    id: `d${i + 1}`,
    title: `Decision ${i + 1}`,
    kind: i % 2 === 0 ? 'auto' : 'approval',
    options: ab,
    recommended: i === 2 ? 'b' : 'a',
    ...(i === 1 ? { keep: 'a' } : {}),
    ...(i === 0 ? { phase: 'eng' } : {}),
  })),
  { id: 'p1', title: 'Approve the plan', kind: 'approval', options: ab, recommended: 'a' },
];
const GATE = { schema_version: 1, run: 'r1', gate_rev: 1, items: ITEMS };
const BAD = { schema_version: 1, gate_rev: 0, items: [{ id: 'D1', title: 'x', kind: 'maybe', options: [ab[0]], recommended: 'z' }] };

beforeAll(() => {
  // `npm test` builds first; a bare `vitest run` on a fresh checkout needs the bundle too.
  if (!existsSync(BIN)) spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT, stdio: 'inherit' });
  dir = mkdtempSync(join(tmpdir(), 'laneward-gate-'));
  writeFileSync(at('gate.json'), JSON.stringify(GATE));
  writeFileSync(at('gate-r2.json'), JSON.stringify({ ...GATE, gate_rev: 2 }));
  writeFileSync(at('empty.json'), '');
  writeFileSync(at('blank.json'), ' \n');
  writeFileSync(at('notjson.json'), '{"schema_version": 1,');
  writeFileSync(at('bad.json'), JSON.stringify(BAD));
  mkdirSync(at('adir'));
});

afterAll(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

const CODE_AT_END = /\(([A-Z_]+)\)$/;
const codes = (lines: string[]) => lines.map((line) => CODE_AT_END.exec(line)?.[1]);

describe('gate render', () => {
  test('should print page 1 with its header, numbered blocks, reply grammar and answer command', () => {
    const ran = gate('render', 'gate.json');
    expect(ran.code).toBe(0);
    expect(ran.err).toEqual([]);
    expect(ran.out[0]).toBe('GATE: run=r1 gate_rev=1 page=1/2 items=10');
    expect(ran.out.slice(1, 9)).toEqual([
      '1. d1 [auto] Decision 1',
      '   a) keep as planned (recommended)',
      '   b) change it',
      '   if unanswered: a',
      '2. d2 [approval] Decision 2',
      '   a) keep as planned (recommended) (keeps the plan)',
      '   b) change it',
      '3. d3 [auto] Decision 3',
    ]);
    expect(ran.out.filter((line) => /^\d+\. /.test(line)).map((line) => line.split(' ')[0])).toEqual(['1.', '2.', '3.', '4.', '5.', '6.', '7.']);
    expect(ran.out.slice(-2)).toEqual([
      'REPLY: rec | rec except <id><option>... | as-is | <id><option>... (bare yes/no is refused)',
      'ANSWER: laneward gate parse gate.json --reply "<reply>" --gate-rev 1',
    ]);
  });

  test('should number page 2 from 8 with stable ids', () => {
    const ran = gate('render', 'gate.json', '--page', '2');
    expect(ran.code).toBe(0);
    expect(ran.out[0]).toBe('GATE: run=r1 gate_rev=1 page=2/2 items=10');
    expect(ran.out.filter((line) => /^\d+\. /.test(line))).toEqual([
      '8. d8 [approval] Decision 8',
      '9. d9 [auto] Decision 9',
      '10. p1 [approval] Approve the plan',
    ]);
  });

  test('should print every page in turn with --all', () => {
    const ran = gate('render', 'gate.json', '--all');
    expect(ran.code).toBe(0);
    expect(ran.out.filter((line) => line.startsWith('GATE: '))).toEqual([
      'GATE: run=r1 gate_rev=1 page=1/2 items=10',
      'GATE: run=r1 gate_rev=1 page=2/2 items=10',
    ]);
    expect(ran.out.filter((line) => /^\d+\. /.test(line)).map((line) => Number.parseInt(line, 10))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  test.each([
    [['--json'], 1, [1, 2, 3, 4, 5, 6, 7]],
    [['--json', '--page', '2'], 2, [8, 9, 10]],
    [['--json', '--all'], null, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]],
  ])('should print one JSON object for %j', (flags, page, numbers) => {
    const ran = gate('render', 'gate.json', ...flags);
    expect(ran.code).toBe(0);
    expect(ran.out).toHaveLength(1);
    const doc = JSON.parse(ran.out[0]!) as { run: string; gate_rev: number; page: number | null; pages: number; items: { number: number; id: string }[] };
    expect({ run: doc.run, gate_rev: doc.gate_rev, page: doc.page, pages: doc.pages }).toEqual({ run: 'r1', gate_rev: 1, page, pages: 2 });
    expect(doc.items.map((item) => item.number)).toEqual(numbers);
    expect(doc.items.map((item) => item.id)).toEqual(numbers.map((n) => (n === 10 ? 'p1' : `d${n}`)));
  });

  test.each([['3'], ['0'], ['99']])('should refuse page %s as GATE_PAGE_OUT_OF_RANGE with exit 2', (page) => {
    const ran = gate('render', 'gate.json', '--page', page);
    expect(ran.code).toBe(2);
    expect(ran.out).toEqual([]);
    expect(ran.err).toHaveLength(1);
    expect(ran.err[0]).toMatch(/^laneward gate render: /);
    expect(codes(ran.err)).toEqual(['GATE_PAGE_OUT_OF_RANGE']);
  });

  test.each([
    [['gate.json', '--page', '1', '--all']],
    [['gate.json', '--page', 'two']],
    [['gate.json', '--reply', 'rec']],
    [[]],
    [['gate.json', 'other.json']],
  ])('should refuse the command line %j as USAGE with exit 2', (args) => {
    const ran = gate('render', ...args);
    expect(ran.code).toBe(2);
    expect(codes(ran.err)).toEqual(['USAGE']);
  });
});

describe('gate parse', () => {
  test('should print the reply summary and one CHOICE line per item', () => {
    const ran = gate('parse', 'gate.json', '--reply', 'rec except D1:B, d2 b', '--gate-rev', '1');
    expect(ran.code).toBe(0);
    expect(ran.err).toEqual([]);
    expect(ran.out[0]).toBe('GATE_REPLY: gate_rev=1 mode=rec_except answered=10 pending=0');
    expect(ran.out.slice(1, 4)).toEqual([
      'CHOICE: id=d1 chosen=b source=pick status=overridden',
      'CHOICE: id=d2 chosen=b source=pick status=overridden',
      'CHOICE: id=d3 chosen=b source=rec status=approved',
    ]);
    expect(ran.out).toHaveLength(11);
  });

  test('should leave unanswered approval items pending and default auto items', () => {
    const ran = gate('parse', 'gate.json', '--reply', 'd2b', '--gate-rev', '1');
    expect(ran.code).toBe(0);
    expect(ran.out[0]).toBe('GATE_REPLY: gate_rev=1 mode=tokens answered=6 pending=4');
    expect(ran.out.slice(1, 5)).toEqual([
      'CHOICE: id=d1 chosen=a source=default status=approved',
      'CHOICE: id=d2 chosen=b source=pick status=overridden',
      'CHOICE: id=d3 chosen=b source=default status=approved',
      'CHOICE: id=d4 chosen=- source=pending status=pending',
    ]);
  });

  test('should apply as-is to p1 and keep items', () => {
    const ran = gate('parse', 'gate.json', '--reply', 'As-Is', '--gate-rev', '1');
    expect(ran.code).toBe(0);
    expect(ran.out[0]).toBe('GATE_REPLY: gate_rev=1 mode=as_is answered=7 pending=3');
    expect(ran.out).toContain('CHOICE: id=d2 chosen=a source=keep status=approved');
    expect(ran.out).toContain('CHOICE: id=p1 chosen=a source=keep status=approved');
  });

  test('should print one JSON object with --json', () => {
    const ran = gate('parse', 'gate.json', '--reply', 'rec', '--gate-rev', '1', '--json');
    expect(ran.code).toBe(0);
    expect(ran.out).toHaveLength(1);
    const doc = JSON.parse(ran.out[0]!) as { ok: boolean; gate_rev: number; mode: string; choices: unknown[] };
    expect(doc).toMatchObject({ ok: true, gate_rev: 1, mode: 'rec' });
    expect(doc.choices).toHaveLength(10);
    expect(doc.choices[0]).toEqual({ id: 'd1', chosen: 'a', source: 'rec', status: 'approved', owner_named: false });
  });

  test.each(['', 'yes', 'no', 'y', 'n', 'ok', 'd99a', 'd1z', 'd1a d1b', 'rec d1b', 'as-is d1a', 'rec except', 'all except '])(
    'should refuse the reply %j as GATE_REPLY_UNPARSED with exit 1',
    (reply) => {
      const ran = gate('parse', 'gate.json', '--reply', reply, '--gate-rev', '1');
      expect(ran.code).toBe(1);
      expect(ran.out).toEqual([]);
      expect(ran.err).toHaveLength(1);
      expect(ran.err[0]).toMatch(/^laneward gate parse: /);
      expect(codes(ran.err)).toEqual(['GATE_REPLY_UNPARSED']);
    },
  );

  test.each([
    ['gate.json', '2'],
    ['gate-r2.json', '1'],
  ])('should refuse %s answered with --gate-rev %s as GATE_REV_STALE with exit 1', (file, rev) => {
    const ran = gate('parse', file, '--reply', 'rec', '--gate-rev', rev);
    expect(ran.code).toBe(1);
    expect(ran.out).toEqual([]);
    expect(codes(ran.err)).toEqual(['GATE_REV_STALE']);
  });

  test.each([
    ['yes', '1', 'GATE_REPLY_UNPARSED'],
    ['rec', '9', 'GATE_REV_STALE'],
  ])('should print a refusal of %j at rev %s as one JSON object with --json', (reply, rev, code) => {
    const ran = gate('parse', 'gate.json', '--reply', reply, '--gate-rev', rev, '--json');
    expect(ran.code).toBe(1);
    expect(ran.err).toEqual([]);
    expect(ran.out).toHaveLength(1);
    expect(JSON.parse(ran.out[0]!)).toMatchObject({ ok: false, code });
  });

  test('should call a reply bound to gate_rev 0 stale, like any other revision, with exit 1', () => {
    const ran = gate('parse', 'gate.json', '--reply', 'rec', '--gate-rev', '0');
    expect(ran.code).toBe(1);
    expect(codes(ran.err)).toEqual(['GATE_REV_STALE']);
  });

  test.each([
    [['gate.json', '--reply', 'rec']],
    [['gate.json', '--gate-rev', '1']],
    [['gate.json', '--reply', 'rec', '--gate-rev', 'x']],
    [['gate.json', '--reply', 'rec', '--gate-rev', '1', '--by', 'me']],
    [['--reply', 'rec', '--gate-rev', '1']],
  ])('should refuse the command line %j as USAGE with exit 2', (args) => {
    const ran = gate('parse', ...args);
    expect(ran.code).toBe(2);
    expect(ran.out).toEqual([]);
    expect(codes(ran.err)).toEqual(['USAGE']);
  });
});

describe('gate decisions', () => {
  type Row = Record<string, unknown>;
  const rowsOf = (ran: Ran): Row[] => ran.out.map((line) => JSON.parse(line) as Row);

  test('should print one schema-valid decisions row per item as JSONL', () => {
    const ran = gate('decisions', 'gate.json', '--reply', 'd1b d4 b', '--gate-rev', '1', '--by', 'owner');
    expect(ran.code).toBe(0);
    expect(ran.err).toEqual([]);
    const rows = rowsOf(ran);
    expect(rows).toHaveLength(10);
    for (const row of rows) expect(checkSchema(decisionSchema, row, 'decisions.jsonl')).toBeUndefined();
    expect(rows.map((row) => row['id'])).toEqual([...Array.from({ length: 9 }, (_, i) => `r1-d${i + 1}`), 'r1-p1']);
    expect(rows[0]).toMatchObject({
      schema_version: 1,
      run: 'r1',
      label: 'd1',
      title: 'Decision 1',
      options: ['a', 'b'],
      recommended: 'a',
      kind: 'auto',
      status: 'overridden',
      gate_rev: 1,
      default_if_unanswered: 'a',
      phase: 'eng',
      chosen: 'b',
      reply: 'd1b d4 b',
      owner_mode: 'tokens',
      owner_named: true,
      answered_by: 'owner',
    });
    expect(Number.isNaN(Date.parse(String(rows[0]!['answered_at'])))).toBe(false);
    // d2 is an unanswered approval item: pending, no default, no answer stamp.
    expect(rows[1]).toMatchObject({ kind: 'approval', status: 'pending', chosen: null, default_if_unanswered: null, owner_named: false });
    expect(rows[1]).not.toHaveProperty('answered_at');
    expect(rows[1]).not.toHaveProperty('answered_by');
    expect(rows[1]).not.toHaveProperty('phase');
  });

  test('should bind row ids to the revision after a reopen', () => {
    const ran = gate('decisions', 'gate-r2.json', '--reply', 'rec', '--gate-rev', '2');
    expect(ran.code).toBe(0);
    const rows = rowsOf(ran);
    expect(rows.map((row) => row['id'])).toEqual([...Array.from({ length: 9 }, (_, i) => `r1-r2-d${i + 1}`), 'r1-r2-p1']);
    for (const row of rows) {
      expect(checkSchema(decisionSchema, row, 'decisions.jsonl')).toBeUndefined();
      expect(row).toMatchObject({ gate_rev: 2, owner_mode: 'rec', status: 'approved' });
      expect(row).not.toHaveProperty('answered_by');
    }
  });

  test('should print one JSON object with --json', () => {
    const ran = gate('decisions', 'gate.json', '--reply', 'as-is', '--gate-rev', '1', '--json');
    expect(ran.code).toBe(0);
    expect(ran.out).toHaveLength(1);
    const doc = JSON.parse(ran.out[0]!) as { ok: boolean; gate_rev: number; mode: string; decisions: Row[] };
    expect(doc).toMatchObject({ ok: true, gate_rev: 1, mode: 'as_is' });
    expect(doc.decisions).toHaveLength(10);
    for (const row of doc.decisions) expect(checkSchema(decisionSchema, row, 'decisions.jsonl')).toBeUndefined();
  });

  test.each([
    ['yes', '1', 'GATE_REPLY_UNPARSED'],
    ['d1a d1b', '1', 'GATE_REPLY_UNPARSED'],
    ['rec', '2', 'GATE_REV_STALE'],
  ])('should refuse %j at rev %s as %s with exit 1 and no rows', (reply, rev, code) => {
    const ran = gate('decisions', 'gate.json', '--reply', reply, '--gate-rev', rev);
    expect(ran.code).toBe(1);
    expect(ran.out).toEqual([]);
    expect(ran.err[0]).toMatch(/^laneward gate decisions: /);
    expect(codes(ran.err)).toEqual([code]);
  });

  test.each([
    [['gate.json', '--reply', 'rec']],
    [['gate.json', '--reply', 'rec', '--gate-rev', '1', '--by', ' ']],
  ])('should refuse the command line %j as USAGE with exit 2', (args) => {
    const ran = gate('decisions', ...args);
    expect(ran.code).toBe(2);
    expect(codes(ran.err)).toEqual(['USAGE']);
  });
});

describe('gate file errors', () => {
  const SUBS: string[][] = [['render'], ['parse', '--reply', 'rec', '--gate-rev', '1'], ['decisions', '--reply', 'rec', '--gate-rev', '1']];

  test.each(
    SUBS.flatMap((sub) => [
      ['missing.json', 'ARTIFACT_MISSING', sub],
      ['adir', 'ARTIFACT_MISSING', sub],
      ['empty.json', 'ARTIFACT_INVALID_JSON', sub],
      ['blank.json', 'ARTIFACT_INVALID_JSON', sub],
      ['notjson.json', 'ARTIFACT_INVALID_JSON', sub],
    ] as const),
  )('should refuse %s as %s with exit 1 (%j)', (file, code, sub) => {
    const [name, ...flags] = sub;
    const ran = gate(name!, file, ...flags);
    expect(ran.code).toBe(1);
    expect(ran.out).toEqual([]);
    expect(ran.err).toHaveLength(1);
    expect(ran.err[0]).toMatch(new RegExp(`^laneward gate ${name}: `));
    expect(codes(ran.err)).toEqual([code]);
  });

  test.each(SUBS)('should print every gate schema issue as an error line (%s)', (name, ...flags) => {
    const expected = checkSchema(gateSchema, BAD, 'bad.json') ?? [];
    expect(expected.length).toBeGreaterThan(1);
    const ran = gate(name, 'bad.json', ...flags);
    expect(ran.code).toBe(1);
    expect(ran.out).toEqual([]);
    expect(codes(ran.err)).toEqual(expected.map((found) => found.code));
    ran.err.forEach((line, i) => expect(line).toContain(` at ${expected[i]!.path}); `));
  });

  test('should print a file refusal as one JSON object with --json', () => {
    const ran = gate('parse', 'missing.json', '--reply', 'rec', '--gate-rev', '1', '--json');
    expect(ran.code).toBe(1);
    expect(ran.err).toEqual([]);
    expect(JSON.parse(ran.out[0]!)).toMatchObject({ ok: false, code: 'ARTIFACT_MISSING' });
  });
});

describe('gate help and usage', () => {
  test.each([
    ['render', 'usage: laneward gate render <gate.json>'],
    ['parse', 'usage: laneward gate parse <gate.json>'],
    ['decisions', 'usage: laneward gate decisions <gate.json>'],
  ])('should print help for %s with exit 0', (sub, start) => {
    const ran = gate(sub, '--help');
    expect(ran.code).toBe(0);
    expect(ran.out[0]!.startsWith(start)).toBe(true);
    expect(ran.err).toEqual([]);
  });

  test('should print the gate help with exit 0 for --help and exit 2 with no subcommand', () => {
    expect(gate('--help').code).toBe(0);
    const bare = gate();
    expect(bare.code).toBe(2);
    expect(bare.out[0]!.startsWith('usage: laneward gate ')).toBe(true);
  });

  test('should refuse an unknown subcommand as USAGE with exit 2 and no stack trace', () => {
    const ran = gate('answer', 'gate.json');
    expect(ran.code).toBe(2);
    expect(ran.err).toHaveLength(1);
    expect(codes(ran.err)).toEqual(['USAGE']);
    expect(ran.err.join('\n')).not.toMatch(/^\s+at /m);
  });
});
