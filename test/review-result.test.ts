import { describe, expect, test } from 'vitest';
import { normaliseSeverity, type Severity } from '../formats/review/severity.ts';
import { parseReviewResult, type ParseResultOptions, type ParsedResult } from '../formats/review/result.ts';
import { renderResultFormat } from '../formats/review/result-format.ts';
import { type ReviewFinding } from '../formats/review/finding.ts';

const SNAP = 'ab'.repeat(32);
const OTHER = 'cd'.repeat(32);
const INPUT = `INPUT: eng ${SNAP}`;
const FENCE = '```gstack-findings';
const CLOSE = '```';

const SUBMIT: ParseResultOptions = { phase: 'eng', snapshot: SNAP, record: false, attested: false };
const RECORD: ParseResultOptions = { ...SUBMIT, record: true };
const ATTESTED: ParseResultOptions = { ...RECORD, attested: true };
const ATTEST_NO_RECORD: ParseResultOptions = { ...SUBMIT, attested: true };

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const lines = (...parts: string[]): string => `${parts.join('\n')}\n`;
const withFence = (...rows: string[]): string => lines(INPUT, 'The review.', FENCE, ...rows, CLOSE);

function parse(text: string | Uint8Array, options: ParseResultOptions = SUBMIT): ParsedResult {
  return parseReviewResult(typeof text === 'string' ? utf8(text) : text, options);
}

/** ok, code or shape, line or finding count, as one string a table row can hold. */
function outcome(result: ParsedResult): string {
  return result.ok ? `ok ${result.receipt} ${result.shape} n=${result.findings.length}` : `${result.code} line=${result.line}`;
}

function findingsOf(text: string | Uint8Array, options: ParseResultOptions = SUBMIT): ReviewFinding[] {
  const result = parse(text, options);
  if (!result.ok) throw new Error(`expected the result to parse, got ${result.code} at ${result.line}: ${result.message}`);
  return result.findings;
}

const F = (severity: Severity, title: string, ref: string | null = null, extra: Partial<ReviewFinding> = {}): ReviewFinding => ({
  ref,
  severity,
  title,
  ...extra,
});

describe('normaliseSeverity', () => {
  test.each([
    ['Critical', 'Critical'],
    ['critical', 'Critical'],
    ['CRIT', 'Critical'],
    ['blocker', 'Critical'],
    ['High', 'High'],
    ['hi', 'High'],
    ['Major', 'High'],
    ['medium', 'Medium'],
    ['MED', 'Medium'],
    ['moderate', 'Medium'],
    ['low', 'Low'],
    ['Minor', 'Low'],
    ['informational', 'Informational'],
    ['Info', 'Informational'],
    ['note', 'Informational'],
    ['NIT', 'Informational'],
    ['**High**', 'High'],
    ['(crit)', 'Critical'],
    ['nit:', 'Informational'],
    ['`low`', 'Low'],
    ['  medium.  ', 'Medium'],
    ['🔴 High', 'High'],
  ])('should read %j as %s', (raw, severity) => {
    expect(normaliseSeverity(raw)).toBe(severity);
  });

  test.each([[''], ['P1'], ['urgent'], ['highest'], ['hig h'], ['severity: high'], ['high-ish'], ['very low'], ['-'], [`${'!'.repeat(70)}high`]])(
    'should never guess a severity from %j',
    (raw) => {
      expect(normaliseSeverity(raw)).toBeNull();
    },
  );

  test.each([
    ['crit', 'Critical'],
    ['Blocker', 'Critical'],
    ['HI', 'High'],
    ['major', 'High'],
    ['Med', 'Medium'],
    ['moderate', 'Medium'],
    ['minor', 'Low'],
    ['info', 'Informational'],
    ['Note', 'Informational'],
    ['nit', 'Informational'],
  ])('should accept the alias %j in a fence row, list item and table row', (alias, severity) => {
    expect(findingsOf(withFence(`{"severity":"${alias}","title":"t"}`))).toEqual([F(severity as Severity, 't')]);
    expect(findingsOf(lines(INPUT, `- [${alias}] t`), RECORD)).toEqual([F(severity as Severity, 't')]);
    expect(findingsOf(lines(INPUT, '| Severity | Title |', '|---|---|', `| ${alias} | t |`), RECORD)).toEqual([F(severity as Severity, 't')]);
  });
});

describe('parseReviewResult receipt', () => {
  test.each<[string, string | Uint8Array, ParseResultOptions, string]>([
    ['the exact INPUT line', withFence(), SUBMIT, 'ok input fence n=0'],
    ['trailing whitespace after it', withFence().replace(INPUT, `${INPUT} \t `), SUBMIT, 'ok input fence n=0'],
    ['a BOM and CRLF line ends', `\ufeff${withFence('{"severity":"High","title":"t"}').replaceAll('\n', '\r\n')}`, SUBMIT, 'ok input fence n=1'],
    ['an empty file', '', SUBMIT, 'RESULT_RECEIPT_MISSING line=null'],
    ['a BOM alone', '\ufeff', SUBMIT, 'RESULT_RECEIPT_MISSING line=null'],
    ['whitespace only', ' \n\r\n\t\n', SUBMIT, 'RESULT_RECEIPT_MISSING line=null'],
    ['an empty attested record', '', ATTESTED, 'RESULT_FINDINGS_MISSING line=null'],
    ['prose first', lines('Review of eng', FENCE, CLOSE), SUBMIT, 'RESULT_RECEIPT_MISSING line=1'],
    ['prose first in a record', lines('Review of eng', 'No findings.'), RECORD, 'RESULT_RECEIPT_MISSING line=1'],
    ['prose first, attested but no record', lines('Review of eng', FENCE, CLOSE), ATTEST_NO_RECORD, 'RESULT_RECEIPT_MISSING line=1'],
    ['prose first in an attested record', lines('Review of eng', 'No findings.'), ATTESTED, 'ok attested none n=0'],
    ['the INPUT line in an attested record', lines(INPUT, 'No findings.'), ATTESTED, 'ok input none n=0'],
    ['another phase', withFence().replace('INPUT: eng', 'INPUT: ceo'), SUBMIT, 'RESULT_RECEIPT_MISSING line=1'],
    ['another phase, attested', withFence().replace('INPUT: eng', 'INPUT: ceo'), ATTESTED, 'RESULT_RECEIPT_MISSING line=1'],
    ['another snapshot', withFence().replace(SNAP, OTHER), SUBMIT, 'RESULT_RECEIPT_MISSING line=1'],
    ['another snapshot, attested', withFence().replace(SNAP, OTHER), ATTESTED, 'RESULT_RECEIPT_MISSING line=1'],
    ['an upper-case snapshot', withFence().replace(SNAP, SNAP.toUpperCase()), SUBMIT, 'RESULT_RECEIPT_MISSING line=1'],
    ['a shortened snapshot', withFence().replace(SNAP, SNAP.slice(0, 12)), ATTESTED, 'RESULT_RECEIPT_MISSING line=1'],
    ['a lower-case input label', withFence().replace('INPUT:', 'input:'), ATTESTED, 'RESULT_RECEIPT_MISSING line=1'],
    ['an indented INPUT line', withFence().replace(INPUT, ` ${INPUT}`), ATTESTED, 'RESULT_RECEIPT_MISSING line=1'],
    ['a word after the snapshot', withFence().replace(INPUT, `${INPUT} ok`), ATTESTED, 'RESULT_RECEIPT_MISSING line=1'],
    ['two spaces in the INPUT line', withFence().replace(INPUT, `INPUT:  eng ${SNAP}`), SUBMIT, 'RESULT_RECEIPT_MISSING line=1'],
    ['the INPUT line on line 2', `\n${withFence()}`, SUBMIT, 'RESULT_RECEIPT_MISSING line=2'],
    ['the INPUT line on line 3, attested', `Notes\n\n${withFence()}`, ATTESTED, 'RESULT_RECEIPT_MISSING line=3'],
    ['another INPUT line lower down, attested', lines('Notes', `INPUT: ceo ${SNAP}`, 'No findings.'), ATTESTED, 'RESULT_RECEIPT_MISSING line=2'],
    ['an undecodable first line', new Uint8Array([...utf8(INPUT), 0xff, 0x0a, ...utf8(lines(FENCE, CLOSE))]), SUBMIT, 'RESULT_RECEIPT_MISSING line=1'],
    ['a NUL in the first line', new Uint8Array([...utf8(INPUT), 0x00, 0x0a, ...utf8(lines(FENCE, CLOSE))]), SUBMIT, 'RESULT_RECEIPT_MISSING line=1'],
    ['an undecodable first line in an attested record', new Uint8Array([0xff, 0x0a, ...utf8('No findings.\n')]), ATTESTED, 'RESULT_FINDINGS_MISSING line=1'],
  ])('should judge %s', (_name, text, options, expected) => {
    expect(outcome(parse(text, options))).toBe(expected);
  });

  test.each([
    [`INPUT: ceo ${SNAP}`, 'phase "ceo"'],
    [`INPUT: eng ${OTHER}`, `snapshot "${OTHER.slice(0, 40)}…"`],
    ['Review', 'not an INPUT line'],
  ])('should say which part of %j is wrong', (first, fragment) => {
    const result = parse(lines(first, FENCE, CLOSE));
    expect(result.ok ? '' : result.message).toContain(fragment);
  });

  test('should refuse an attested record whose INPUT line is wrong and say the attestation does not cover it', () => {
    const result = parse(lines(`INPUT: eng ${OTHER}`, 'No findings.'), ATTESTED);
    expect(outcome(result)).toBe('RESULT_RECEIPT_MISSING line=1');
    expect(result.ok ? '' : result.message).toContain('--attest');
  });

  test.each([
    ['an empty phase', { ...SUBMIT, phase: '' }],
    ['a phase with a space', { ...SUBMIT, phase: 'e g' }],
    ['a short snapshot', { ...SUBMIT, snapshot: 'abc' }],
    ['an upper-case snapshot', { ...SUBMIT, snapshot: SNAP.toUpperCase() }],
  ])('should throw RangeError for options with %s', (_name, options) => {
    expect(() => parse(withFence(), options)).toThrow(RangeError);
  });
});

describe('parseReviewResult bytes', () => {
  const head = utf8(lines(INPUT, 'prose'));
  test.each<[string, Uint8Array, string]>([
    ['an invalid byte on line 3', new Uint8Array([...head, 0x61, 0xff, 0x0a, ...utf8(lines(FENCE, CLOSE))]), 'RESULT_FINDINGS_MISSING line=3'],
    ['an overlong encoding on line 4', new Uint8Array([...head, ...utf8(FENCE), 0x0a, 0xc0, 0x80, 0x0a, ...utf8(CLOSE)]), 'RESULT_FINDINGS_MISSING line=4'],
    ['an encoded surrogate on line 3', new Uint8Array([...head, 0xed, 0xa0, 0x80, 0x0a]), 'RESULT_FINDINGS_MISSING line=3'],
    ['a truncated sequence at the end', new Uint8Array([...utf8(withFence()), 0xe2, 0x82]), 'RESULT_FINDINGS_MISSING line=5'],
    ['a NUL on line 4', new Uint8Array([...head, ...utf8(FENCE), 0x0a, 0x00, 0x0a, ...utf8(CLOSE)]), 'RESULT_FINDINGS_MISSING line=4'],
    ['a NUL on line 3 before a bad byte on line 4', new Uint8Array([...head, 0x00, 0x0a, 0xff, 0x0a]), 'RESULT_FINDINGS_MISSING line=3'],
    ['a bad byte on line 3 before a NUL on line 4', new Uint8Array([...head, 0xff, 0x0a, 0x00, 0x0a]), 'RESULT_FINDINGS_MISSING line=3'],
    ['nothing after the INPUT line', utf8(`${INPUT}\n \n\n`), 'RESULT_FINDINGS_MISSING line=null'],
    ['the INPUT line alone without a newline', utf8(INPUT), 'RESULT_FINDINGS_MISSING line=null'],
  ])('should refuse %s', (_name, bytes, expected) => {
    expect(outcome(parse(bytes))).toBe(expected);
    expect(outcome(parse(bytes, RECORD))).toBe(expected);
  });

  test('should count lines from the file start under a BOM and CRLF', () => {
    const text = `\ufeff${withFence('{"severity":"High","title":"t"}', '{"severity":"bad","title":"t"}').replaceAll('\n', '\r\n')}`;
    expect(outcome(parse(text))).toBe('RESULT_FINDINGS_MISSING line=5');
  });
});

describe('parseReviewResult fence', () => {
  test.each<[string, string, ReviewFinding[]]>([
    ['an empty fence', withFence(), []],
    ['blank lines in the fence', withFence('', '  ', '{"severity":"Low","title":"t"}', ''), [F('Low', 't')]],
    [
      'every field',
      withFence('{"id":"F1","severity":"High","title":"  Retry never stops ","file":"src/a.ts","line":12,"fix":"cap it"}'),
      [F('High', 'Retry never stops', 'F1', { file: 'src/a.ts', line: 12, fix: 'cap it' })],
    ],
    ['a numeric id', withFence('{"id":7,"severity":"low","title":"t"}'), [F('Low', 't', '7')]],
    ['null and empty optional fields', withFence('{"id":null,"severity":"Low","title":"t","file":null,"line":null,"fix":"","urgent":false,"user_challenge":null}'), [F('Low', 't')]],
    ['an unknown key', withFence('{"severity":"Low","title":"t","confidence":0.9}'), [F('Low', 't')]],
    [
      'a user challenge',
      withFence('{"id":"F2","severity":"Medium","title":"Drop region two","user_challenge":true,"changes":"scope"}'),
      [F('Medium', 'Drop region two', 'F2', { user_challenge: true, changes: 'scope' })],
    ],
    [
      'an urgent finding',
      withFence('{"severity":"Critical","title":"World-readable backups","urgent":true,"suggested_owner":" storage "}'),
      [F('Critical', 'World-readable backups', null, { urgent: true, suggested_owner: 'storage' })],
    ],
    ['changes without a challenge, kept as given', withFence('{"severity":"Low","title":"t","changes":"Cost"}'), [F('Low', 't', null, { changes: 'cost' })]],
    ['an indented fence', lines(INPUT, '   ```gstack-findings', '  {"severity":"Low","title":"t"}', '   ```'), [F('Low', 't')]],
    ['a longer fence', lines(INPUT, '````gstack-findings', '{"severity":"Low","title":"t"}', '`````'), [F('Low', 't')]],
    ['a tilde fence', lines(INPUT, '~~~gstack-findings', '{"severity":"Low","title":"t"}', '~~~~'), [F('Low', 't')]],
    ['a fence closed with trailing spaces', lines(INPUT, `${FENCE}  `, '{"severity":"Low","title":"t"}', '```  '), [F('Low', 't')]],
    [
      'an example quoted in a longer code block',
      lines(INPUT, '````markdown', FENCE, '{"severity":"High","title":"example"}', CLOSE, '````', FENCE, '{"severity":"Low","title":"real"}', CLOSE),
      [F('Low', 'real')],
    ],
    ['prose items beside the fence', lines(INPUT, '- [High] summary bullet', '| Severity | Title |', '|---|---|', '| Low | x |', FENCE, CLOSE), []],
    ['inline code that is not a fence', lines(INPUT, '```gstack-findings``` is the block', FENCE, '{"severity":"Low","title":"t"}', CLOSE), [F('Low', 't')]],
  ])('should read %s', (_name, text, findings) => {
    expect(findingsOf(text)).toEqual(findings);
    const record = parse(text, RECORD);
    expect(record.ok && record.shape).toBe('fence');
    expect(record.ok && record.findings).toEqual(findings);
  });

  test.each<[string, string, number | null]>([
    ['no fence', lines(INPUT, 'All good.'), null],
    ['no fence but a list', lines(INPUT, '- [High] t'), null],
    ['no fence but No findings.', lines(INPUT, 'No findings.'), null],
    ['two fences', lines(INPUT, FENCE, CLOSE, 'more', FENCE, '{"severity":"Low","title":"t"}', CLOSE), 5],
    ['an unclosed fence', lines(INPUT, 'prose', FENCE, '{"severity":"Low","title":"t"}'), 3],
    ['a closing line with text after it', lines(INPUT, FENCE, '{"severity":"Low","title":"t"}', '``` done'), 2],
    ['a shorter closing fence', lines(INPUT, '````gstack-findings', '```'), 2],
    ['a shorter fence line inside a longer fence', lines(INPUT, '````gstack-findings', '```', '````'), 3],
    ['an unclosed code block after the fence', lines(INPUT, FENCE, CLOSE, '```ts', 'code'), 4],
    ['a fence indented 4 spaces', lines(INPUT, `    ${FENCE}`, CLOSE), 2],
    ['a fence indented by a tab', lines(INPUT, `\t${FENCE}`, CLOSE), 2],
    ['a row that is not JSON', withFence('{"severity":"Low","title":"t"}', 'severity: Low'), 5],
    ['a row that is an array', withFence('["Low","t"]'), 4],
    ['a row that is a string', withFence('"Low"'), 4],
    ['two objects on one line', withFence('{"severity":"Low","title":"a"} {"severity":"Low","title":"b"}'), 4],
    ['a missing severity', withFence('{"title":"t"}'), 4],
    ['a numeric severity', withFence('{"severity":2,"title":"t"}'), 4],
    ['an unknown severity', withFence('{"severity":"urgent","title":"t"}'), 4],
    ['a P1 severity', withFence('{"severity":"P1","title":"t"}'), 4],
    ['a missing title', withFence('{"severity":"Low"}'), 4],
    ['a title that is not a string', withFence('{"severity":"Low","title":["t"]}'), 4],
    ['an empty title', withFence('{"severity":"Low","title":"  "}'), 4],
    ['a two-line title', withFence('{"severity":"Low","title":"a\\nb"}'), 4],
    ['an id that is an object', withFence('{"id":{},"severity":"Low","title":"t"}'), 4],
    ['a fractional id', withFence('{"id":1.5,"severity":"Low","title":"t"}'), 4],
    ['a file that is a number', withFence('{"severity":"Low","title":"t","file":3}'), 4],
    ['line 0', withFence('{"severity":"Low","title":"t","line":0}'), 4],
    ['a negative line', withFence('{"severity":"Low","title":"t","line":-3}'), 4],
    ['a fractional line', withFence('{"severity":"Low","title":"t","line":1.5}'), 4],
    ['a line given as a string', withFence('{"severity":"Low","title":"t","line":"12"}'), 4],
    ['a line past 2^53', withFence('{"severity":"Low","title":"t","line":9007199254740993}'), 4],
    ['a challenge without changes', withFence('{"severity":"Low","title":"t","user_challenge":true}'), 4],
    ['a challenge with other changes', withFence('{"severity":"Low","title":"t","user_challenge":true,"changes":"size"}'), 4],
    ['user_challenge that is a string', withFence('{"severity":"Low","title":"t","user_challenge":"yes","changes":"scope"}'), 4],
    ['urgent without an owner', withFence('{"severity":"High","title":"t","urgent":true}'), 4],
    ['urgent with an empty owner', withFence('{"severity":"High","title":"t","urgent":true,"suggested_owner":"  "}'), 4],
    ['an owner that is not a string', withFence('{"severity":"High","title":"t","urgent":true,"suggested_owner":1}'), 4],
    ['urgent that is 1', withFence('{"severity":"High","title":"t","urgent":1,"suggested_owner":"x"}'), 4],
  ])('should refuse %s', (_name, text, line) => {
    expect(outcome(parse(text))).toBe(`RESULT_FINDINGS_MISSING line=${line}`);
  });

  test('should refuse the same fence faults in a record', () => {
    expect(outcome(parse(withFence('{"severity":"urgent","title":"t"}'), RECORD))).toBe('RESULT_FINDINGS_MISSING line=4');
    expect(outcome(parse(lines(INPUT, FENCE, CLOSE, FENCE, CLOSE), RECORD))).toBe('RESULT_FINDINGS_MISSING line=4');
    expect(outcome(parse(lines(INPUT, '- [High] t', FENCE), RECORD))).toBe('RESULT_FINDINGS_MISSING line=3');
  });
});

describe('parseReviewResult hand-run records', () => {
  test.each<[string, string[], ReviewFinding[]]>([
    ['a minimal table', ['| Severity | Title |', '|---|---|', '| High | Retry never stops |', '| low | Typo |'], [F('High', 'Retry never stops'), F('Low', 'Typo')]],
    [
      'a table with columns in any order and optional columns',
      ['| # | **TITLE** | File | Line | severity | Fix | Owner |', '|:-:|---|---|--:|---|---|---|', '| F1 | Retry | `src/a.ts` | 12 | **Crit** | cap it | ops |', '| | Typo | - | - | nit | | |'],
      [F('Critical', 'Retry', 'F1', { file: 'src/a.ts', line: 12, fix: 'cap it' }), F('Informational', 'Typo')],
    ],
    ['a table with an Id column and a line range', ['| Id | Severity | Title | Line |', '| --- | --- | --- | --- |', '| A7 | Medium | Range | 12-14 |'], [F('Medium', 'Range', 'A7', { line: 12 })]],
    ['a table without outer pipes', ['Severity | Title', '--- | ---', 'High | a \\| b'], [F('High', 'a | b')]],
    ['a header-only table', ['| Severity | Title |', '|---|---|'], []],
    ['two findings tables', ['## Security', '| Severity | Title |', '|---|---|', '| High | a |', '', '## Style', '| Title | Severity |', '|---|---|', '| b | Low |'], [F('High', 'a'), F('Low', 'b')]],
    ['a summary table beside the findings table', ['| Area | Verdict |', '|---|---|', '| - [High] not an item | ok |', '', '| Severity | Title |', '|---|---|', '| Low | a |'], [F('Low', 'a')]],
  ])('should read %s', (_name, body, findings) => {
    const result = parse(lines(INPUT, 'Intro prose.', ...body, 'Closing prose.'), RECORD);
    expect(outcome(result)).toBe(`ok input table n=${findings.length}`);
    expect(result.ok && result.findings).toEqual(findings);
  });

  test.each<[string, string, ReviewFinding]>([
    ['a dash item', '- [High] Retry never stops', F('High', 'Retry never stops')],
    ['a star item', '* [High] Retry never stops', F('High', 'Retry never stops')],
    ['a plus item', '+ [High] Retry never stops', F('High', 'Retry never stops')],
    ['a numbered item', '1. [High] Retry never stops', F('High', 'Retry never stops')],
    ['a parenthesised number', '12) [High] Retry never stops', F('High', 'Retry never stops')],
    ['an indented item', '   - [low] nested one', F('Low', 'nested one')],
    ['a bold labelled tag', '1. **[Severity: High] Retry never stops.** The loop has no cap.', F('High', 'Retry never stops')],
    ['a bold tag with the title after the bold', '- **[High]** Retry never stops', F('High', 'Retry never stops')],
    ['a bold lead after the tag', '- [High] **Retry never stops.** The loop has no cap.', F('High', 'Retry never stops')],
    ['bold inside a plain title', '- [High] **Retry** never stops', F('High', '**Retry** never stops')],
    ['a labelled tag', '- [Sev: crit] Disk fills', F('Critical', 'Disk fills')],
    ['a tag with the word severity', '- [High severity] Disk fills', F('High', 'Disk fills')],
    ['an emoji in the tag', '- [🔴 High] Disk fills', F('High', 'Disk fills')],
    ['a finding label with an em dash', '**Finding 3 — High. Retry never stops.** The loop has no cap.', F('High', 'Retry never stops', '3')],
    ['a finding label with an en dash', '**Finding 3 – Medium. Retry never stops.** prose', F('Medium', 'Retry never stops', '3')],
    ['a finding label with a hyphen', '**Finding 3 - Low. Retry never stops.** prose', F('Low', 'Retry never stops', '3')],
    ['a finding label after a number', '2. **Finding F2 — crit: Disk fills.** prose', F('Critical', 'Disk fills', 'F2')],
    ['a finding label with the title after the bold', '**Finding 4 — High** Disk fills', F('High', 'Disk fills', '4')],
    ['a finding label in a heading', '### Finding 5 — High. Disk fills', F('High', 'Disk fills', '5')],
    ['a tag in a heading', '## [Low] Disk fills', F('Low', 'Disk fills')],
    ['a colon after the tag', '- [High]: Disk fills', F('High', 'Disk fills')],
    ['a dash after the tag', '- [High] — Disk fills', F('High', 'Disk fills')],
    ['a dash after a bold tag', '- **[High]** - Disk fills', F('High', 'Disk fills')],
    ['a title starting with a hyphenated word', '- [Low] -Werror is off', F('Low', '-Werror is off')],
  ])('should read %s', (_name, item, finding) => {
    const result = parse(lines(INPUT, 'Intro.', item, 'More prose about it.'), RECORD);
    expect(outcome(result)).toBe('ok input list n=1');
    expect(result.ok && result.findings).toEqual([finding]);
  });

  test('should read every item of a list and skip the prose, boxes, links and phrases between them', () => {
    const text = lines(
      INPUT,
      '# Review',
      '- [High] One',
      '  The loop has no cap, see below.',
      '- [ ] a task box',
      '- [x] a done box',
      '- [RFC 9110](https://example.org) says so',
      '- [see below] a bracketed phrase',
      '* plain bullet',
      '**Note:** bold prose',
      '1. **[Severity: Low] Two.** More.',
      '',
      '**Finding 3 — Medium. Three.** Details.',
      '```md',
      '- [High] an example in a code block',
      '```',
    );
    const result = parse(text, RECORD);
    expect(outcome(result)).toBe('ok input list n=3');
    expect(result.ok && result.findings).toEqual([F('High', 'One'), F('Low', 'Two'), F('Medium', 'Three', '3')]);
  });

  test.each([['No findings.'], ['no findings'], ['NO FINDINGS.'], ['  No findings.  ']])('should read %j as zero findings', (line) => {
    expect(outcome(parse(lines(INPUT, 'I read the plan.', line, 'Thanks.'), RECORD))).toBe('ok input none n=0');
  });

  test.each<[string, string[], number | null]>([
    ['an unknown tag', ['- [Security] SQL injection'], 3],
    ['an unknown labelled tag', ['1. **[Severity: Urgent] SQL injection.** prose'], 3],
    ['an unknown finding label', ['**Finding 3 — Severe. SQL injection.** prose'], 3],
    ['a finding label without a severity', ['**Finding 3 — SQL injection** prose'], 3],
    ['a tag without a title', ['- [High]'], 3],
    ['a bold tag without a title', ['- **[High]**'], 3],
    ['a severity label outside brackets', ['- **Severity: High** SQL injection'], 3],
    ['a bad item after good ones', ['- [High] a', '- [Low] b', '- [P1] c'], 5],
    ['a table row with an unknown severity', ['| Severity | Title |', '|---|---|', '| High | a |', '| P2 | b |'], 6],
    ['a table row with an empty title', ['| Severity | Title |', '|---|---|', '| High | |'], 5],
    ['a table row missing cells', ['| Severity | Title |', '|---|---|', '| High |'], 5],
    ['a table row with a bad line', ['| Severity | Title | Line |', '|---|---|---|', '| High | a | near the top |'], 5],
    ['a table and a list', ['| Severity | Title |', '|---|---|', '| High | a |', '', '- [Low] b'], 7],
    ['a list and a table', ['- [Low] b', '', '| Severity | Title |', '|---|---|', '| High | a |'], 5],
    ['a list and No findings.', ['- [Low] b', 'No findings.'], 4],
    ['No findings. and a list', ['No findings.', '- [Low] b'], 4],
    ['an empty table and No findings.', ['| Severity | Title |', '|---|---|', '', 'No findings.'], 6],
    ['prose only', ['The plan looks fine to me.', '- plain bullet'], null],
    ['items only inside a code block', ['```', '- [High] a', '```'], null],
    ['a table without Severity and Title columns', ['| Area | Verdict |', '|---|---|', '| store | High |'], null],
    ['No findings inside a sentence', ['No findings in the store.'], null],
  ])('should refuse a record with %s', (_name, body, line) => {
    expect(outcome(parse(lines(INPUT, 'Intro.', ...body), RECORD))).toBe(`RESULT_FINDINGS_MISSING line=${line}`);
  });

  test('should count lines from the top of an attested record without an INPUT line', () => {
    expect(outcome(parse(lines('- [High] a', '- [nope] b'), ATTESTED))).toBe('RESULT_FINDINGS_MISSING line=2');
    const result = parse(lines('- [High] a', '- [Low] b'), ATTESTED);
    expect(outcome(result)).toBe('ok attested list n=2');
    expect(outcome(parse(lines('| Severity | Title |', '|---|---|', '| High | a |'), ATTESTED))).toBe('ok attested table n=1');
    expect(outcome(parse(lines('No findings.'), ATTESTED))).toBe('ok attested none n=0');
    expect(outcome(parse(withFence().replace(`${INPUT}\n`, ''), ATTESTED))).toBe('ok attested fence n=0');
  });

  test('should refuse every hand-run shape in a submit without --record', () => {
    for (const body of ['- [High] a', '| Severity | Title |\n|---|---|\n| High | a |', 'No findings.']) {
      expect(outcome(parse(lines(INPUT, body)))).toBe('RESULT_FINDINGS_MISSING line=null');
    }
  });
});

describe('parseReviewResult size', () => {
  test('should read a fence of 5,000 rows and a list of 5,000 items', () => {
    const rows = Array.from({ length: 5000 }, (_, i) => `{"id":"F${i + 1}","severity":"${i % 2 === 0 ? 'High' : 'low'}","title":"finding ${i + 1}","line":${i + 1}}`);
    const fence = findingsOf(withFence(...rows));
    expect(fence).toHaveLength(5000);
    expect(fence[4999]).toEqual(F('Low', 'finding 5000', 'F5000', { line: 5000 }));
    const items = Array.from({ length: 5000 }, (_, i) => `${i + 1}. [Med] item ${i + 1}`);
    const list = findingsOf(lines(INPUT, ...items), RECORD);
    expect(list).toHaveLength(5000);
    expect(list[4999]).toEqual(F('Medium', 'item 5000'));
  });

  test.each([
    ['a long tag', `- [${'a'.repeat(200_000)}] x`],
    ['a long run of stars', `**${'*'.repeat(200_000)}`],
    ['a long run of pipes', `${'|'.repeat(200_000)}\n${'|-'.repeat(100_000)}`],
    ['a long finding label', `**Finding 1 — ${'a'.repeat(200_000)}`],
    ['a long run of backticks', '`'.repeat(200_000)],
  ])('should finish on %s', (_name, body) => {
    const result = parse(lines(INPUT, body), RECORD);
    expect(result.ok).toBe(false);
  });
});

describe('renderResultFormat', () => {
  const text = renderResultFormat('eng', SNAP, '/runs/r1/eng-outside.r1-a2.result.md');

  /** The lines the text shows: its INPUT line and its example block, copied as they stand. */
  function copied(): { input: string; block: string[] } {
    const all = text.split('\n');
    const input = all.find((line) => line.startsWith('INPUT: ')) ?? '';
    const open = all.indexOf(FENCE);
    const close = all.indexOf(CLOSE, open + 1);
    return { input, block: all.slice(open, close + 1) };
  }

  test('should state the receipt, the fence, the fields, the rules and the result path', () => {
    expect(text.split('\n')).toContain(INPUT);
    for (const word of [FENCE, 'Critical, High, Medium, Low or Informational', '"user_challenge": true', '"changes"', '"urgent": true', '"suggested_owner"', 'empty']) {
      expect(text).toContain(word);
    }
    expect(text.trimEnd().endsWith('/runs/r1/eng-outside.r1-a2.result.md')).toBe(true);
  });

  test('should describe a result that parses when written exactly as it says', () => {
    const { input, block } = copied();
    const result = parse(lines(input, '', 'My review of the plan, in prose.', '', ...block));
    expect(outcome(result)).toBe('ok input fence n=3');
    expect(result.ok && result.findings).toEqual([
      F('High', 'The retry loop never gives up', 'F1', { file: 'src/retry.ts', line: 12, fix: 'Stop after five attempts' }),
      F('Medium', 'Drop the second region from this plan', 'F2', { user_challenge: true, changes: 'scope' }),
      F('Critical', 'Backups are written world-readable', 'F3', { urgent: true, suggested_owner: 'storage team' }),
    ]);
    expect(outcome(parse(lines(input, 'Nothing to report.', FENCE, CLOSE)))).toBe('ok input fence n=0');
  });

  test('should keep a path with a line break on one line', () => {
    expect(renderResultFormat('eng', SNAP, '/tmp/a\nb').split('\n').at(-2)).toBe('4. Write the whole result, first line to last, to this file: /tmp/a\\nb');
  });
});
