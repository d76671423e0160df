import { cpSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { codesOf, ensureBuilt, laneward } from './helpers/cli.ts';
import { PlanDriver } from './helpers/plan-driver.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('brief');
let copies = 0;

const WORDS = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight'];
const HIGHS = WORDS.map((w, i) => ({ id: `N${i + 1}`, severity: 'High', title: `Problem number ${w} here`, fix: `fix ${i + 1}` }));
const URGENT = { id: 'N9', severity: 'Critical', title: 'Tokens logged in plain text', urgent: true, suggested_owner: 'security' };
const CHALLENGE = { id: 'N10', severity: 'Medium', title: 'Drop the importer entirely', user_challenge: true, changes: 'scope', fix: 'drop it' };
const DEFER = 'carry it into the build as a blocking task';
const CONTROL = /[\u0000-\u001f\u007f\u2028\u2029]/;

interface Run {
  readonly out: string;
  readonly run: string;
}

/** A run driven to its gate through the real CLI, answered with `replies`, then exported. */
function drive(name: string, review: (phase: string, voice: string) => object[], ...replies: string[]): Run {
  const d = new PlanDriver(root, name);
  d.writePlan();
  d.driveToGate(review);
  for (const reply of replies) {
    const answered = d.plan('answer', '--gate-rev', '1', '--reply', reply, '--by', 'human');
    if (answered.code !== 0) throw new Error(`answer failed: ${answered.stderr}`);
  }
  const exported = d.plan('export');
  if (exported.code !== 0) throw new Error(`export failed: ${exported.stderr}`);
  return { out: d.out, run: readFileSync(join(d.out, '.laneward-run'), 'utf8').split(' ')[0]! };
}

/** A private copy of a run directory, for tests that break or add files. */
function copy(run: Run): Run {
  const out = join(root, `copy-${++copies}`);
  cpSync(run.out, out, { recursive: true });
  return { out, run: run.run };
}

function brief(out: string, ...args: string[]) {
  const ran = laneward(['brief', 'render', '--out', out, ...args]);
  return { ...ran, lines: ran.stdout.split('\n').slice(0, -1) };
}

function rows(out: string, file: string): Record<string, unknown>[] {
  return readFileSync(join(out, file), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
}

function answeredOn(out: string, id: string): string {
  return String(rows(out, 'decisions.jsonl').find((row) => row['id'] === id)!['answered_at']).slice(0, 10);
}

const answerLine = (out: string) => `Full review: ${out}/review-record.md; answer: laneward plan answer --out ${out} --gate-rev 1 --reply "<reply>" --by human`;
const NO_COST = 'Cost so far: $0.00 spent, $0.00 worst case (4 attempt(s) of unknown cost counted at their reservation), cap none.';

/** Ten items (d1-d8, uc1, p1) and one urgent finding; d1 answered `a`, the rest pending. */
let big: Run;
/** One item answered by `as-is`: the gate is decided and the run complete. */
let decided: Run;

beforeAll(() => {
  ensureBuilt();
  big = drive('big', (phase, voice) => (phase === 'ceo' && voice === 'native' ? [...HIGHS, URGENT, CHALLENGE] : []), 'd1a');
  decided = drive('decided', (phase, voice) => (phase === 'eng' && voice === 'outside' ? [HIGHS[0]!] : []), 'as-is');
}, 120_000);

describe('brief render', () => {
  test('should open with URGENT, then the summary, then seven numbered decisions, the cost and the answer command', () => {
    const r = brief(big.out);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.lines.slice(0, 5)).toEqual([
      '## URGENT, outside this plan',
      '',
      `- [Critical] Tokens logged in plain text (${big.run}-ceo-native-9; suggested owner: security)`,
      '',
      expect.stringMatching(/^Summary: 2 of 2 phases closed \(ceo, eng\); 10 finding\(s\): 1 accepted, 0 deferred, 0 rejected, 0 fixed, 9 open; 10 decision\(s\) at gate_rev 1: 1 decided, 7 take their default if unanswered, 2 wait for your answer; cycle time \d+s\.$/),
    ]);
    expect(r.lines).toContain('## Decisions: gate_rev 1, page 1 of 2, items 1-7 of 10');
    expect(r.lines.filter((l) => /^\d+\. /.test(l))).toEqual(WORDS.slice(0, 7).map((w, i) => `${i + 1}. d${i + 1} [auto] High: Problem number ${w} here`));
    const d1 = r.lines.indexOf('1. d1 [auto] High: Problem number one here');
    expect(r.lines.slice(d1 + 1, d1 + 4)).toEqual([
      '   a) apply the fix to the plan: fix 1 (recommended)',
      `   b) ${DEFER} (keeps the plan)`,
      `   decided d1a on ${answeredOn(big.out, `${big.run}-d1`)}`,
    ]);
    expect(r.lines.filter((l) => l.startsWith('   if unanswered: '))).toEqual(Array(6).fill(`   if unanswered: b (${DEFER}); rec takes a`));
    expect(r.lines.slice(-5)).toEqual([
      `More decisions: laneward brief render --out ${big.out} --page 2`,
      '',
      NO_COST,
      '',
      answerLine(big.out),
    ]);
  });

  test('should continue the numbering on page 2 and mark approval items pending until answered', () => {
    const r = brief(big.out, '--page', '2');
    expect(r.code).toBe(0);
    expect(r.lines[0]).toBe('## URGENT, outside this plan');
    expect(r.lines).toContain('## Decisions: gate_rev 1, page 2 of 2, items 8-10 of 10');
    expect(r.lines.filter((l) => /^\d+\. /.test(l))).toEqual([
      '8. d8 [auto] High: Problem number eight here',
      "9. uc1 [approval] Drop the importer entirely (challenges the plan's scope)",
      '10. p1 [approval] Approve the plan',
    ]);
    expect(r.lines.filter((l) => l === '   pending until you answer')).toHaveLength(2);
    expect(r.lines.some((l) => l.startsWith('More decisions:'))).toBe(false);
    expect(r.lines.at(-1)).toBe(answerLine(big.out));
  });

  test.each([['0'], ['3']])('should refuse page %s with GATE_PAGE_OUT_OF_RANGE (exit 2)', (page) => {
    const r = brief(big.out, '--page', page);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(codesOf(r.stderr)).toEqual(['GATE_PAGE_OUT_OF_RANGE']);
    expect(r.stderr).toContain(`page ${page} of 2 at --page`);
  });

  test('should put the cost in a ### Cost section above the relaying-agent trailer with --captain', () => {
    const r = brief(big.out, '--captain', '--page', '2');
    expect(r.code).toBe(0);
    expect(r.lines.filter((l) => l.startsWith('Cost so far:'))).toEqual([NO_COST]);
    const at = r.lines.indexOf('### Cost');
    expect(at).toBeGreaterThan(r.lines.indexOf('10. p1 [approval] Approve the plan'));
    expect(r.lines.slice(at)).toEqual([
      '### Cost',
      '',
      NO_COST,
      '',
      '### For the relaying agent',
      '',
      'Relay this page to the owner unchanged and answer nothing yourself.',
      "Pass the owner's reply back with the owner's words verbatim:",
      `laneward plan answer --out ${big.out} --gate-rev 1 --reply "<reply>" --by agent:<your-id> --owner-reply "<the owner's words, verbatim>"`,
      '',
      answerLine(big.out),
    ]);
  });

  test('should read the cost from the SPEND line of review-record.md, and say so when there is none', () => {
    const c = copy(big);
    const record = join(c.out, 'review-record.md');
    writeFileSync(record, readFileSync(record, 'utf8').replace(/^SPEND: .*$/m, 'SPEND: spent=1.25 reserved=2.00 unknown=0(0.00) worst_case=3.25 cap=10.00'));
    expect(brief(c.out).lines).toContain('Cost so far: $1.25 spent, $3.25 worst case, cap $10.00.');
    rmSync(record);
    const r = brief(c.out);
    expect(r.code).toBe(0);
    expect(r.lines).toContain('Cost so far: not recorded (review-record.md has no SPEND line).');
  });

  test('should replace the generated sentence with summary.md, and with --summary over it', () => {
    const c = copy(big);
    writeFileSync(join(c.out, 'summary.md'), 'The run found eight problems.\n\nOne is urgent.\n');
    expect(brief(c.out).lines[4]).toBe('Summary: The run found eight problems. One is urgent.');
    const own = join(root, 'own-summary.md');
    writeFileSync(own, 'Our own words.\n');
    expect(brief(c.out, '--summary', own).lines[4]).toBe('Summary: Our own words.');
    // A blank summary.md is no summary: the generated sentence stands.
    writeFileSync(join(c.out, 'summary.md'), '\n  \n');
    expect(brief(c.out).lines[4]).toMatch(/^Summary: 2 of 2 phases closed/);
  });

  test('should refuse a --summary file that is absent with BRIEF_INPUT_MISSING (exit 3)', () => {
    const r = brief(big.out, '--summary', join(root, 'no-such-summary.md'));
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(codesOf(r.stderr)).toEqual(['BRIEF_INPUT_MISSING']);
    expect(r.stderr).toContain('no-such-summary.md');
  });

  test('should save the page as brief.md with --write, atomically, and name it in --json', () => {
    const c = copy(big);
    const r = brief(c.out, '--write', '--page', '2');
    expect(r.code).toBe(0);
    expect(readFileSync(join(c.out, 'brief.md'), 'utf8')).toBe(r.stdout);
    expect(readdirSync(c.out).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    const json = JSON.parse(brief(c.out, '--json').stdout) as Record<string, unknown>;
    expect(json).toMatchObject({ ok: true, run: c.run, gate_rev: 1, page: 1, pages: 2, written: null });
    const written = JSON.parse(brief(c.out, '--json', '--write').stdout) as { written: string; lines: string[] };
    expect(written.written).toBe(join(c.out, 'brief.md'));
    expect(readFileSync(written.written, 'utf8')).toBe(`${written.lines.join('\n')}\n`);
  });

  test.each([['gate.json'], ['decisions.jsonl'], ['findings.jsonl']])('should refuse with BRIEF_INPUT_MISSING (exit 3) when %s is absent', (file) => {
    const c = copy(big);
    rmSync(join(c.out, file));
    const r = brief(c.out, '--write');
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(codesOf(r.stderr)).toEqual(['BRIEF_INPUT_MISSING']);
    expect(r.stderr).toContain(`at ${file}`);
    expect(r.stderr).toContain(`${join(c.out, file)} does not exist`);
    expect(readdirSync(c.out)).not.toContain('brief.md');
  });

  test.each([['gate.json'], ['decisions.jsonl'], ['findings.jsonl'], ['timing.json'], ['review-record.md'], ['summary.md']])(
    'should refuse with BRIEF_INPUT_MISSING (exit 3) when %s cannot be read as a file',
    (file) => {
      const c = copy(big);
      rmSync(join(c.out, file), { force: true });
      mkdirSync(join(c.out, file));
      const r = brief(c.out);
      expect(r.code).toBe(3);
      expect(codesOf(r.stderr)).toEqual(['BRIEF_INPUT_MISSING']);
      expect(r.stderr).toContain(`${join(c.out, file)} is not a regular file`);
    },
  );

  test.each([
    ['gate.json', '{"schema_version":1,"run":"x","gate_rev":1,"items":[]}\n', 'ARTIFACT_SCHEMA'],
    ['gate.json', '{not json', 'ARTIFACT_INVALID_JSON'],
    ['gate.json', '{"schema_version":2,"run":"x","gate_rev":1,"items":[]}\n', 'ARTIFACT_UNSUPPORTED_VERSION'],
    ['decisions.jsonl', 'not json\n', 'ARTIFACT_MALFORMED_JSONL'],
    ['findings.jsonl', '{"schema_version":1}\n', 'ARTIFACT_SCHEMA'],
    ['timing.json', '{"schema_version":1,"run":"x","phases":"none"}\n', 'ARTIFACT_SCHEMA'],
  ])('should refuse an invalid %s (%s) with exit 3', (file, content, code) => {
    const c = copy(big);
    writeFileSync(join(c.out, file), content);
    const r = brief(c.out);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(codesOf(r.stderr)).toContain(code);
  });

  test('should refuse rows bound to another run with ARTIFACT_UNBOUND_ID', () => {
    const c = copy(big);
    const file = join(c.out, 'findings.jsonl');
    writeFileSync(file, readFileSync(file, 'utf8').replaceAll(`"run":"${c.run}"`, '"run":"someone-else"'));
    const r = brief(c.out);
    expect(r.code).toBe(3);
    expect(new Set(codesOf(r.stderr))).toEqual(new Set(['ARTIFACT_UNBOUND_ID']));
  });

  test('should escape control characters in every value taken from the input, so no line is forged', () => {
    const c = copy(big);
    const gateFile = join(c.out, 'gate.json');
    const gate = JSON.parse(readFileSync(gateFile, 'utf8'));
    gate.items[0].title = 'Evil\n## URGENT, outside this plan\u0007';
    gate.items[0].options[1].text = 'defer\r\nFull review: forged';
    writeFileSync(gateFile, JSON.stringify(gate));
    const findingsFile = join(c.out, 'findings.jsonl');
    writeFileSync(findingsFile, readFileSync(findingsFile, 'utf8').replace('Tokens logged in plain text', 'Tokens\\u2028laneward plan answer\\u001b[31m'));
    writeFileSync(join(c.out, 'summary.md'), 'Fine\tso far\u0000.\n');
    for (const args of [[], ['--captain']]) {
      const r = brief(c.out, ...args);
      expect(r.code).toBe(0);
      expect(r.lines.filter((l) => CONTROL.test(l))).toEqual([]);
      expect(r.lines.filter((l) => l === '## URGENT, outside this plan')).toHaveLength(1);
      expect(r.lines.filter((l) => l.startsWith('Full review:'))).toEqual([answerLine(c.out)]);
      expect(r.lines.at(-1)).toBe(answerLine(c.out));
      expect(r.lines).toContain('1. d1 [auto] Evil\\n## URGENT, outside this plan\\u0007');
      expect(r.lines).toContain('   b) defer\\r\\nFull review: forged (keeps the plan)');
      expect(r.lines[2]).toBe(`- [Critical] Tokens\\u2028laneward plan answer\\u001b[31m (${c.run}-ceo-native-9; suggested owner: security)`);
      expect(r.lines[4]).toBe('Summary: Fine\\tso far\\u0000.');
    }
  });

  test('should show a decided gate as decided, with nothing left to answer', () => {
    const r = brief(decided.out);
    expect(r.code).toBe(0);
    expect(r.lines.slice(0, 3)).toEqual(['## URGENT, outside this plan', '', 'None.']);
    expect(r.lines[4]).toMatch(/; 1 finding\(s\): 0 accepted, 1 deferred, 0 rejected, 0 fixed, 0 open; 2 decision\(s\) at gate_rev 1: 2 decided, 0 take their default if unanswered, 0 wait for your answer; /);
    expect(r.lines).toContain(`   decided d1b on ${answeredOn(decided.out, `${decided.run}-d1`)}`);
    expect(r.lines).toContain(`   decided p1a on ${answeredOn(decided.out, `${decided.run}-p1`)}`);
    expect(r.lines).toContain('## Decisions: gate_rev 1, page 1 of 1, items 1-2 of 2');
    expect(r.lines.at(-1)).toBe(`Full review: ${decided.out}/review-record.md; gate_rev 1 is decided, nothing to answer.`);
  });

  test('should say phases and cycle time are not recorded without timing.json', () => {
    const c = copy(decided);
    rmSync(join(c.out, 'timing.json'));
    const r = brief(c.out);
    expect(r.code).toBe(0);
    expect(r.lines[4]).toMatch(/^Summary: phases closed not recorded \(no timing\.json\); .*; cycle time not recorded\.$/);
  });

  test.each([
    [['brief', 'render'], 'USAGE'],
    [['brief', 'render', '--out', '/x', '--page', 'two'], 'USAGE'],
    [['brief', 'render', '--out', '/x', 'stray'], 'USAGE'],
    [['brief', 'close', '--out', '/x'], 'USAGE'],
    [['brief', 'nope'], 'USAGE'],
  ])('should reject the command line %j with exit 2', (args, code) => {
    const r = laneward(args);
    expect(r.code).toBe(2);
    expect(codesOf(r.stderr)).toEqual([code]);
  });
});

describe('brief close', () => {
  /** d1 (auto), uc1 (approval), p1; d1 answered b (keeps the plan), the approvals pending. */
  let run: Run;
  const plan = (name: string, text: string) => {
    const file = join(root, name);
    writeFileSync(file, text);
    return realpathSync(file);
  };
  const close = (file: string, out = run.out) => {
    const ran = laneward(['brief', 'close', '--out', out, '--plan', file]);
    return { ...ran, lines: ran.stdout.split('\n').slice(0, -1) };
  };

  beforeAll(() => {
    run = drive('close', (phase, voice) => (phase === 'ceo' && voice === 'native' ? [HIGHS[0]!, CHALLENGE] : []), 'd1b');
  }, 120_000);

  test('should rewrite decided lines, keep pending and unmarked ones, and exit 1 with DRAFT_DIRECTION_UNRESOLVED', () => {
    const file = plan('plan-mixed.md', [
      '# Plan',
      '- Keep the importer (uc1); draft direction stands until the owner decides.',
      '- Batches go in one write (d1): draft direction stands until the owner decides.',
      '- Unmarked: draft direction stands until the owner decides.',
      '- Two at once (d1) (uc1): draft direction stands until the owner decides.',
      '- A line (d1) without the phrase stays.',
      '',
    ].join('\n'));
    const r = close(file);
    expect(r.code).toBe(1);
    const on = answeredOn(run.out, `${run.run}-d1`);
    expect(r.lines).toEqual([
      `DRAFT_DIRECTION: line 3 ${run.run}-d1 rewritten`,
      `DRAFT_DIRECTION_UNRESOLVED: line 2 ${run.run}-uc1 ${run.run}-uc1 is still pending`,
      'DRAFT_DIRECTION_UNRESOLVED: line 4 - the line names no decision: mark it (<label>) such as (uc1)',
      `DRAFT_DIRECTION_UNRESOLVED: line 5 - the line names 2 decisions: ${run.run}-d1, ${run.run}-uc1`,
      `DRAFT_DIRECTIONS: rewritten=1 unresolved=3 changed=yes plan=${file}`,
    ]);
    expect(codesOf(r.stderr)).toEqual(Array(3).fill('DRAFT_DIRECTION_UNRESOLVED'));
    expect(r.stderr).toContain(`at ${file}:2)`);
    expect(readFileSync(file, 'utf8')).toBe([
      '# Plan',
      '- Keep the importer (uc1); draft direction stands until the owner decides.',
      `- Batches go in one write (d1): decided d1b (${DEFER}) on ${on}.`,
      '- Unmarked: draft direction stands until the owner decides.',
      '- Two at once (d1) (uc1): draft direction stands until the owner decides.',
      '- A line (d1) without the phrase stays.',
      '',
    ].join('\n'));
    expect(readdirSync(root).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  test('should leave the plan untouched when no line is decided', () => {
    const text = '# Plan\n- Approval (p1): draft direction stands until the owner decides.\n';
    const file = plan('plan-pending.md', text);
    const before = statSync(file).mtimeMs;
    const r = close(file);
    expect(r.code).toBe(1);
    expect(r.lines).toEqual([
      `DRAFT_DIRECTION_UNRESOLVED: line 2 ${run.run}-p1 ${run.run}-p1 is still pending`,
      `DRAFT_DIRECTIONS: rewritten=0 unresolved=1 changed=no plan=${file}`,
    ]);
    expect(readFileSync(file, 'utf8')).toBe(text);
    expect(statSync(file).mtimeMs).toBe(before);
  });

  test('should exit 0 with nothing to do when the plan has no draft direction line', () => {
    const file = plan('plan-none.md', '# Plan\nNothing provisional.\n');
    const r = close(file);
    expect(r.code).toBe(0);
    expect(r.lines).toEqual([`DRAFT_DIRECTIONS: rewritten=0 unresolved=0 changed=no plan=${file}`]);
  });

  test('should refuse an absent plan with PLAN_UNREADABLE and an absent decisions.jsonl with BRIEF_INPUT_MISSING (exit 3)', () => {
    const absent = close(join(root, 'no-plan.md'));
    expect(absent.code).toBe(3);
    expect(codesOf(absent.stderr)).toEqual(['PLAN_UNREADABLE']);
    const c = copy(run);
    rmSync(join(c.out, 'decisions.jsonl'));
    const file = plan('plan-any.md', '- (d1) draft direction stands until the owner decides\n');
    const missing = close(file, c.out);
    expect(missing.code).toBe(3);
    expect(codesOf(missing.stderr)).toEqual(['BRIEF_INPUT_MISSING']);
    expect(readFileSync(file, 'utf8')).toBe('- (d1) draft direction stands until the owner decides\n');
  });

  test('should refuse a plan that is not UTF-8 and rewrite a symlinked plan at its target', () => {
    const bad = join(root, 'plan-latin1.md');
    writeFileSync(bad, Buffer.from([0x28, 0x64, 0x31, 0x29, 0x20, 0xe9, 0x0a]));
    const refused = close(bad);
    expect(refused.code).toBe(3);
    expect(codesOf(refused.stderr)).toEqual(['PLAN_UNREADABLE']);
    const target = plan('plan-target.md', '- (d1) draft direction stands until the owner decides\n');
    const link = join(root, 'plan-link.md');
    symlinkSync(target, link);
    const r = close(link);
    expect(r.code).toBe(0);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(target, 'utf8')).toBe(`- (d1) decided d1b (${DEFER}) on ${answeredOn(run.out, `${run.run}-d1`)}\n`);
  });

  test('should rewrite every line once the gate is decided, by label or full id, keep CRLF, and exit 0', () => {
    const d = new PlanDriver(root, 'close');
    expect(d.plan('answer', '--gate-rev', '1', '--reply', 'uc1a p1a', '--by', 'human').code).toBe(0);
    expect(d.plan('export').code).toBe(0);
    const file = plan('plan-crlf.md', `# Plan\r\n- Keep it (${run.run}-uc1): Draft direction stands until the owner decides.\r\n- Approve (P1): draft direction stands until the owner decides\r\n`);
    const r = close(file);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.lines).toEqual([
      `DRAFT_DIRECTION: line 2 ${run.run}-uc1 rewritten`,
      `DRAFT_DIRECTION: line 3 ${run.run}-p1 rewritten`,
      `DRAFT_DIRECTIONS: rewritten=2 unresolved=0 changed=yes plan=${file}`,
    ]);
    const on = answeredOn(run.out, `${run.run}-p1`);
    expect(readFileSync(file, 'utf8')).toBe(
      `# Plan\r\n- Keep it (${run.run}-uc1): decided uc1a (keep the plan's direction) on ${on}.\r\n` +
        `- Approve (P1): decided p1a (approve the plan as it stands (only changes picked in this reply apply)) on ${on}\r\n`,
    );
    const json = JSON.parse(laneward(['brief', 'close', '--out', run.out, '--plan', file, '--json']).stdout) as Record<string, unknown>;
    expect(json).toEqual({ ok: true, plan: file, changed: false, rewritten: [], unresolved: [] });
  });
});
