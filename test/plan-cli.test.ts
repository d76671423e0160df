import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync, spawn } from 'node:child_process';
import { beforeAll, describe, expect, test } from 'vitest';
import { BUNDLE, codesOf, ensureBuilt, laneward } from './helpers/cli.ts';
import { PlanDriver, PLAN, type Step } from './helpers/plan-driver.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('plan');
let n = 0;
const driver = () => {
  const d = new PlanDriver(root, `r${++n}`);
  d.writePlan();
  return d;
};

const high = (title: string, extra: object = {}) => ({ id: 'F1', severity: 'High', title, fix: `fix ${title}`, ...extra });

function validate(d: PlanDriver): string[] {
  const ran = laneward(['artifact', 'validate', d.out], { cwd: d.dir });
  expect(ran.stderr).toBe('');
  expect(ran.code).toBe(0);
  return ran.stdout.split('\n').filter((l) => l !== '');
}

function gateRev(context: Step): number {
  const line = context.lines.find((l) => l.startsWith('GATE: '))!;
  return Number(/gate_rev=(\d+)/.exec(line)![1]);
}

beforeAll(() => ensureBuilt());

describe('plan next', () => {
  test('should start a run with its lines in order and write both prompts', () => {
    const d = driver();
    const context = d.plan('next', '--plan', join(d.dir, 'plan.md'));
    expect(context.code).toBe(0);
    const prefixes = context.lines.map((l) => l.split(':')[0]);
    expect(prefixes).toEqual(['STATE_ROOT', 'ESTIMATE', 'PHASE', 'SCOPE', 'ATTEMPT', 'ATTEMPT', 'SPEND', 'GSTACK_RESULT']);
    expect(context.lines[0]).toBe(`STATE_ROOT: ${d.state} durable=yes`);
    expect(context.lines[2]).toMatch(/^PHASE: ceo snapshot=[0-9a-f]{64} order=ceo,eng$/);
    expect(context.lines[3]).toBe('SCOPE: ui=no (none found) dx=no (none found) source=ui:detected,dx:detected');
    expect(context.lines[6]).toBe('SPEND: spent=0.00 reserved=0.00 unknown=0(0.00) worst_case=0.00 cap=none');
    expect(context.lines.at(-1)).toBe(`GSTACK_RESULT: skill=autoplan status=awaiting_result run=${d.out}`);
    const [native, outside] = context.attempts;
    expect(native).toMatchObject({ phase: 'ceo', voice: 'native', prompt: join(d.out, 'ceo-native-prompt.md') });
    expect(outside!.result).toBe(join(d.out, `ceo-outside.a2.md`));
    const run = readFileSync(join(d.out, '.laneward-run'), 'utf8');
    expect(run).toMatch(/^plan-\d{8}-[0-9a-f]{6} /);
    expect(native!.id).toBe(`${run.split(' ')[0]}-a1`);
    const prompt = readFileSync(native!.prompt, 'utf8');
    expect(prompt).toContain(`INPUT: ceo ${context.snapshot}`);
    expect(prompt).toContain('1. Parse the CSV with a streaming reader.');
    expect(prompt).toContain(native!.result);
  });

  test('should reprint open attempts and report them as EXECUTION_UNKNOWN, minting nothing', () => {
    const d = driver();
    const first = d.plan('next', '--plan', join(d.dir, 'plan.md'));
    const again = d.plan('next');
    expect(again.code).toBe(0);
    expect(again.attempts.map((a) => a.id)).toEqual(first.attempts.map((a) => a.id));
    expect(again.lines.filter((l) => l.startsWith('EXECUTION_UNKNOWN: '))).toEqual(
      first.attempts.map((a) => `EXECUTION_UNKNOWN: ${a.id} phase=ceo voice=${a.voice}`),
    );
    expect(again.status).toBe('awaiting_result');
  });

  test.each([
    ['--ui', '--developer-tool', 'ceo,design,dx,eng', 'ui:flag,dx:flag'],
    ['--no-ui', '--no-dx', 'ceo,eng', 'ui:flag,dx:flag'],
  ])('should order phases by scope flags %s %s', (ui, dx, order, source) => {
    const d = driver();
    const context = d.plan('next', '--plan', join(d.dir, 'plan.md'), ui, dx);
    expect(context.lines.find((l) => l.startsWith('PHASE: '))).toMatch(new RegExp(`order=${order}$`));
    expect(context.lines.find((l) => l.startsWith('SCOPE: '))).toContain(`source=${source}`);
    expect(context.lines.find((l) => l.startsWith('SCOPE_PIN: '))).toMatch(/^SCOPE_PIN: add <!-- laneward-scope: ui=(yes|no) dx=(yes|no) --> as the first line of /);
  });

  test('should detect scope from the plan, and a marker pins it', () => {
    const d = driver();
    d.writePlan(PLAN.replace('3. Write', '3. Add a button to the dashboard and a CLI flag. Write'));
    const context = d.plan('next', '--plan', join(d.dir, 'plan.md'));
    expect(context.lines.find((l) => l.startsWith('PHASE: '))).toMatch(/order=ceo,design,dx,eng$/);
    const pinned = driver();
    pinned.writePlan(`<!-- laneward-scope: ui=no dx=yes -->\n${PLAN.replace('3. Write', '3. Add a button. Write')}`);
    const next = pinned.plan('next', '--plan', join(pinned.dir, 'plan.md'));
    expect(next.lines.find((l) => l.startsWith('PHASE: '))).toMatch(/order=ceo,dx,eng$/);
    expect(next.lines.find((l) => l.startsWith('SCOPE: '))).toContain('source=ui:marker,dx:marker');
  });

  test.each([
    ['without a review record', PLAN.replace('## Review record', '## Notes'), 'PLAN_SECTIONS_INVALID'],
    ['without an implementation plan', PLAN.replace('## Implementation plan', '## Steps'), 'PLAN_SECTIONS_INVALID'],
    ['with a heading only inside a code fence', PLAN.replace('## Review record', '```\n## Review record\n```'), 'PLAN_SECTIONS_INVALID'],
    ['binary', '\u0000\u0001## Implementation plan\n## Review record\n', 'PLAN_UNREADABLE'],
  ])('should refuse a plan %s with exit 3, writing nothing', (_name, text, code) => {
    const d = driver();
    d.writePlan(text);
    const context = d.plan('next', '--plan', join(d.dir, 'plan.md'));
    expect(context.code).toBe(3);
    expect(codesOf(context.stderr)).toEqual([code]);
    expect(context.lines).toEqual(['GSTACK_RESULT: skill=autoplan status=refused run=-']);
    expect(existsSync(join(d.out, '.laneward-run'))).toBe(false);
  });

  test('should refuse a plan that is a directory or over 4 MiB', () => {
    const d = driver();
    mkdirSync(join(d.dir, 'dir.md'));
    expect(codesOf(d.plan('next', '--plan', join(d.dir, 'dir.md')).stderr)).toEqual(['PLAN_UNREADABLE']);
    writeFileSync(join(d.dir, 'big.md'), `${PLAN}${'x'.repeat(50 * 1024 * 1024)}`);
    const big = d.plan('next', '--plan', join(d.dir, 'big.md'));
    expect(big.code).toBe(3);
    expect(codesOf(big.stderr)).toEqual(['PLAN_UNREADABLE']);
  });

  test('should refuse a run directory that holds another tool\'s run.json', () => {
    const d = driver();
    mkdirSync(d.out, { recursive: true });
    writeFileSync(join(d.out, 'run.json'), '{}');
    const context = d.plan('next', '--plan', join(d.dir, 'plan.md'));
    expect(context.code).toBe(3);
    expect(codesOf(context.stderr)).toEqual(['RUN_NOT_INITIALIZED']);
  });

  test('should refuse a state root it cannot write, with STATE_UNAVAILABLE and nothing written', () => {
    const d = driver();
    writeFileSync(join(d.dir, 'not-a-dir'), '');
    const context = d.raw(['plan', 'next', '--out', d.out, '--state', join(d.dir, 'not-a-dir', 'state'), '--plan', join(d.dir, 'plan.md')]);
    expect(context.code).toBe(1);
    expect(codesOf(context.stderr)).toEqual(['STATE_UNAVAILABLE']);
    expect(existsSync(join(d.out, '.laneward-run'))).toBe(false);
  });

  test('should find the run by --out alone, through the state root its binding records', () => {
    const d = driver();
    d.plan('next', '--plan', join(d.dir, 'plan.md'));
    const status = d.raw(['plan', 'status', '--out', d.out]);
    expect(status.code).toBe(0);
    expect(status.lines[0]).toMatch(new RegExp(`^RUN: plan-\\d{8}-[0-9a-f]{6} status=awaiting_result state_root=${d.state} gate_rev=0 session_kind=interactive$`));
  });

  test('should refuse commands on a directory that holds no run', () => {
    const d = driver();
    for (const sub of ['submit', 'answer', 'export', 'status', 'resume', 'release']) {
      const args = sub === 'submit' ? ['--phase', 'ceo', '--voice', 'native', '--attempt', 'x', '--result', 'r', '--model', 'm']
        : sub === 'answer' ? ['--gate-rev', '1', '--reply', 'rec'] : sub === 'release' ? ['--attempt', 'x'] : [];
      const context = d.plan(sub, ...args);
      expect(context.code, sub).toBe(3);
      expect(codesOf(context.stderr), sub).toEqual(['RUN_NOT_INITIALIZED']);
    }
  });

  test('should print the unknown session kind and run as interactive', () => {
    const d = driver();
    d.env = { LANEWARD_SESSION_KIND: 'robot' };
    const context = d.plan('next', '--plan', join(d.dir, 'plan.md'));
    expect(context.lines[1]).toBe("SESSION_KIND: interactive (unknown kind 'robot')");
  });

  test('should say durable=no on an ephemeral root', () => {
    const d = driver();
    d.env = { LANEWARD_EPHEMERAL: '1' };
    expect(d.plan('next', '--plan', join(d.dir, 'plan.md')).lines[0]).toBe(`STATE_ROOT: ${d.state} durable=no`);
  });
});

describe('plan submit', () => {
  test('should bind once, seal the bytes read-only and close the phase with consensus', () => {
    const d = driver();
    const context = d.plan('next', '--plan', join(d.dir, 'plan.md'));
    const [native, outside] = context.attempts as [typeof context.attempts[0], typeof context.attempts[0]];
    d.writeResult(native, context.snapshot!, [high('Batch writes are not atomic'), { severity: 'low', title: 'CSV dialect unspecified' }]);
    const bound = d.submit(native, 'claude-opus-4');
    expect(bound.code).toBe(0);
    const sha = execFileSync('sha256sum', [native.result], { encoding: 'utf8' }).slice(0, 12);
    expect(bound.lines).toContain(`BOUND: ${native.id} phase=ceo voice=native model=claude-opus-4 findings=2 sha256=${sha}`);
    const seal = join(d.out, `ceo-native.${native.id}.bound.md`);
    expect(readFileSync(seal, 'utf8')).toBe(readFileSync(native.result, 'utf8'));
    expect(statSync(seal).mode & 0o777).toBe(0o444);
    // A later write to the reviewer's file changes nothing bound.
    writeFileSync(native.result, 'changed');
    expect(readFileSync(seal, 'utf8')).not.toBe('changed');

    d.writeResult(outside, context.snapshot!, [high('Batch writes are not atomic')]);
    const closed = d.submit(outside, 'gpt-5');
    expect(closed.code).toBe(0);
    expect(closed.lines.find((l) => l.startsWith('PHASE_CLOSED: '))).toMatch(/^PHASE_CLOSED: ceo confirmed=\d+ unverified=\d+ disagree=\d+ new=\d+ native_only=\d+ coverage=both$/);
    expect(JSON.parse(readFileSync(join(d.out, 'ceo-consensus.json'), 'utf8'))).toMatchObject({ phase: 'ceo', coverage: 'both' });
    expect(existsSync(join(d.out, 'ceo-consensus.md'))).toBe(true);
    const eng = d.plan('next');
    expect(eng.lines[0]).toMatch(/^PHASE: eng /);
    expect(readFileSync(eng.attempts[0]!.prompt, 'utf8')).toContain('"phase":"ceo"');
  });

  test('should refuse another attempt\'s result file, a wrong voice and an unknown attempt', () => {
    const d = driver();
    const context = d.plan('next', '--plan', join(d.dir, 'plan.md'));
    const [native, outside] = context.attempts as [typeof context.attempts[0], typeof context.attempts[0]];
    d.writeResult(outside, context.snapshot!, []);
    const crossed = d.plan('submit', '--phase', 'ceo', '--voice', 'native', '--attempt', native.id, '--result', outside.result, '--model', 'claude-x');
    expect(codesOf(crossed.stderr)).toEqual(['ATTEMPT_MISMATCH']);
    const voice = d.plan('submit', '--phase', 'ceo', '--voice', 'native', '--attempt', outside.id, '--result', outside.result, '--model', 'claude-x');
    expect(codesOf(voice.stderr)).toEqual(['ATTEMPT_MISMATCH']);
    const unknown = d.plan('submit', '--phase', 'ceo', '--voice', 'native', '--attempt', 'nope-a9', '--result', outside.result, '--model', 'claude-x');
    expect(codesOf(unknown.stderr)).toEqual(['ATTEMPT_MISMATCH']);
    const phase = d.plan('submit', '--phase', 'eng', '--voice', 'native', '--attempt', native.id, '--result', outside.result, '--model', 'claude-x');
    expect(codesOf(phase.stderr)).toEqual(['ATTEMPT_MISMATCH']);
  });

  test.each([
    ['no INPUT line', () => `Review.\n\`\`\`gstack-findings\n\`\`\`\n`, 'RESULT_RECEIPT_MISSING'],
    ['another snapshot', () => `INPUT: ceo ${'0'.repeat(64)}\n\`\`\`gstack-findings\n\`\`\`\n`, 'RESULT_RECEIPT_MISSING'],
    ['another phase', (snap: string) => `INPUT: eng ${snap}\n\`\`\`gstack-findings\n\`\`\`\n`, 'RESULT_RECEIPT_MISSING'],
    ['no fence', (snap: string) => `INPUT: ceo ${snap}\n\nAll good.\n`, 'RESULT_FINDINGS_MISSING'],
    ['an empty file', () => '', 'RESULT_RECEIPT_MISSING'],
  ])('should refuse a result with %s', (_name, body, code) => {
    const d = driver();
    const context = d.plan('next', '--plan', join(d.dir, 'plan.md'));
    const native = context.attempts[0]!;
    writeFileSync(native.result, body(context.snapshot!));
    const ran = d.submit(native, 'claude-opus-4');
    expect(ran.code).toBe(3);
    expect(codesOf(ran.stderr)).toEqual([code]);
    expect(existsSync(join(d.out, `ceo-native.${native.id}.bound.md`))).toBe(false);
    expect(d.plan('status').lines).toContain('PHASE_STATUS: ceo state=open native=running outside=running');
  });

  test('should refuse a result that is a FIFO, a directory or absent, without hanging', () => {
    const d = driver();
    const context = d.plan('next', '--plan', join(d.dir, 'plan.md'));
    const native = context.attempts[0]!;
    execFileSync('mkfifo', [native.result]);
    expect(codesOf(d.submit(native, 'claude-opus-4').stderr)).toEqual(['RESULT_UNREADABLE']);
    const dir = join(d.dir, 'a-dir');
    mkdirSync(dir);
    expect(codesOf(d.plan('submit', '--phase', 'ceo', '--voice', 'native', '--attempt', native.id, '--result', dir, '--model', 'claude-x').stderr)).toEqual(['RESULT_UNREADABLE']);
    expect(codesOf(d.plan('submit', '--phase', 'ceo', '--voice', 'native', '--attempt', native.id, '--result', join(d.dir, 'absent'), '--model', 'claude-x').stderr)).toEqual(['RESULT_UNREADABLE']);
  });

});

describe('plan spend', () => {
  test('should reserve under a cap, settle usage once, and refuse past the cap', () => {
    const d = driver();
    const context = d.plan('next', '--plan', join(d.dir, 'plan.md'), '--spend-cap', '5', '--estimate-usd', '2');
    expect(context.lines.find((l) => l.startsWith('SPEND: '))).toBe('SPEND: spent=0.00 reserved=4.00 unknown=0(0.00) worst_case=4.00 cap=5.00');
    const [native, outside] = context.attempts as [typeof context.attempts[0], typeof context.attempts[0]];
    d.writeResult(native, context.snapshot!, []);
    const bound = d.submit(native, 'claude-opus-4', '--usage-usd', '0.50');
    expect(bound.lines.find((l) => l.startsWith('SPEND: '))).toBe('SPEND: spent=0.50 reserved=2.00 unknown=0(0.00) worst_case=2.50 cap=5.00');
    expect(d.submit(native, 'claude-opus-4', '--usage-usd', '0.50').lines.find((l) => l.startsWith('SPEND: '))).toBe('SPEND: spent=0.50 reserved=2.00 unknown=0(0.00) worst_case=2.50 cap=5.00');
    d.writeResult(outside, context.snapshot!, []);
    d.submit(outside, 'gpt-5');
    // Unknown spend counts its reservation in the worst case: 0.50 + 2.00 unknown.
    const refused = d.plan('next');
    expect(refused.code).toBe(3);
    expect(codesOf(refused.stderr)).toEqual(['SPEND_CAP_EXCEEDED']);
    expect(d.plan('status').lines.find((l) => l.startsWith('SPEND: '))).toBe('SPEND: spent=0.50 reserved=0.00 unknown=1(2.00) worst_case=2.50 cap=5.00');
  });

});

describe('plan answer and export', () => {
  test('should drive a run to a validated export with as-is', () => {
    const d = driver();
    const gate = d.driveToGate((phase, voice) => (phase === 'ceo' && voice === 'native' ? [high('Batch writes are not atomic')] : []));
    expect(gate.lines.find((l) => l.startsWith('GATE: '))).toBe(`GATE: gate_rev=1 items=2 pending=2 file=${join(d.out, 'gate.json')}`);
    const answer = d.plan('answer', '--gate-rev', '1', '--reply', 'as-is', '--by', 'human');
    expect(answer.code).toBe(0);
    const run = readFileSync(join(d.out, '.laneward-run'), 'utf8').split(' ')[0]!;
    expect(answer.lines.filter((l) => l.startsWith('APPROVED: '))).toEqual([`APPROVED: ${run}-d1 b`, `APPROVED: ${run}-p1 a`]);
    expect(answer.lines.filter((l) => l.startsWith('APPLY: '))).toEqual([]);
    expect(answer.status).toBe('complete');
    const exported = d.plan('export');
    expect(exported.code).toBe(0);
    expect(exported.lines).toContain(`ARTIFACT_VALID: run=${run} status=complete`);
    expect(validate(d)).toEqual([`ARTIFACT_VALID: run=${run} status=complete`]);
    const decisions = readFileSync(join(d.out, 'decisions.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(decisions.map((r) => [r.id, r.chosen, r.status, r.answered_by, r.owner_mode])).toEqual([
      [`${run}-d1`, 'b', 'overridden', 'human', 'as_is'],
      // p1 recommended b (d1 changes the plan); as-is takes a.
      [`${run}-p1`, 'a', 'overridden', 'human', 'as_is'],
    ]);
    const tasks = readFileSync(join(d.out, 'tasks.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(tasks.map((t) => t.id)).toEqual([`${run}-t1`, `${run}-t2`, `${run}-t3`, `${run}-f1`]);
    expect(tasks[3].findings).toEqual([`${run}-ceo-native-1`]);
    const findings = readFileSync(join(d.out, 'findings.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(findings[0]).toMatchObject({ id: `${run}-ceo-native-1`, disposition: 'deferred', severity: 'High' });
    expect(readFileSync(join(d.out, 'plan.md'), 'utf8')).toMatch(/^## URGENT, outside this plan\n\nNone\.\n\n## Implementation plan\n/);
  });

  test('should record only what a partial reply answered, and never overwrite an earlier answer', () => {
    const d = driver();
    d.driveToGate((phase, voice) => (phase === 'ceo' && voice === 'outside' ? [high('One'), { ...high('Two'), id: 'F2' }] : []));
    const run = readFileSync(join(d.out, '.laneward-run'), 'utf8').split(' ')[0]!;
    const partial = d.plan('answer', '--gate-rev', '1', '--reply', 'd1b', '--by', 'human');
    expect(partial.status).toBe('gate_pending');
    expect(partial.lines.filter((l) => l.startsWith('APPROVED: '))).toEqual([`APPROVED: ${run}-d1 b`]);
    expect(partial.lines.find((l) => l.startsWith('GATE: '))).toMatch(/items=3 pending=2 /);
    const rest = d.plan('answer', '--gate-rev', '1', '--reply', 'rec except d2b', '--by', 'human');
    expect(rest.status).toBe('complete');
    expect(rest.lines.filter((l) => l.startsWith('APPROVED: '))).toEqual([`APPROVED: ${run}-d2 b`, `APPROVED: ${run}-p1 b`]);
    expect(d.plan('export').code).toBe(0);
    validate(d);
    const rows = readFileSync(join(d.out, 'decisions.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(rows.map((r) => [r.chosen, r.reply])).toEqual([['b', 'd1b'], ['b', 'rec except d2b'], ['b', 'rec except d2b']]);
  });

  test('should export at gate_pending with every decision pending, and validate', () => {
    const d = driver();
    d.driveToGate();
    const exported = d.plan('export');
    expect(exported.code).toBe(0);
    expect(exported.status).toBe('gate_pending');
    validate(d);
    const run = JSON.parse(readFileSync(join(d.out, 'run.json'), 'utf8'));
    expect(run.counts).toEqual({ decisions: 1, decisions_pending: 1, findings: 0, tasks: 3 });
    const tasks = readFileSync(join(d.out, 'tasks.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(tasks.every((t) => t.status === 'blocked_on_decision' && t.blocked_by.length === 1)).toBe(true);
  });

  test('should require --by in an unattended session and put the guard line in the record', () => {
    const d = driver();
    d.env = { LANEWARD_SESSION_KIND: 'unattended' };
    d.driveToGate();
    expect(codesOf(d.plan('answer', '--gate-rev', '1', '--reply', 'rec').stderr)).toEqual(['ANSWER_BY_REQUIRED']);
    expect(d.plan('answer', '--gate-rev', '1', '--reply', 'rec', '--by', 'agent:lane-7', '--owner-reply', 'rec').code).toBe(0);
    expect(d.plan('export').code).toBe(0);
    validate(d);
    expect(readFileSync(join(d.out, 'review-record.md'), 'utf8')).toContain('(GUARD_NOT_INSTALLED)');
    expect(JSON.parse(readFileSync(join(d.out, 'run.json'), 'utf8')).session_kind).toBe('unattended');
    const row = JSON.parse(readFileSync(join(d.out, 'decisions.jsonl'), 'utf8').trim());
    expect(row).toMatchObject({ answered_by: 'agent:lane-7', answered_role: 'agent', owner_reply: 'rec', reply: 'rec' });
  });

  test('should make a relaying agent record the owner\'s words, and refuse words that resolve differently', () => {
    const d = driver();
    d.driveToGate((phase, voice) => (phase === 'eng' && voice === 'native' ? [high('One')] : []));
    expect(codesOf(d.plan('answer', '--gate-rev', '1', '--reply', 'd1b p1a', '--by', 'agent:t1').stderr)).toEqual(['OWNER_REPLY_REQUIRED']);
    expect(codesOf(d.plan('answer', '--gate-rev', '1', '--reply', 'd1b p1a', '--by', 'agent:t1', '--owner-reply', 'rec').stderr)).toEqual(['GATE_OWNER_REPLY_MISMATCH']);
    writeFileSync(join(d.dir, 'words.txt'), 'D1: b, p1 a\n');
    const ok = d.plan('answer', '--gate-rev', '1', '--reply', 'd1b p1a', '--by', 'agent:t1', '--owner-reply-file', join(d.dir, 'words.txt'));
    expect(ok.code).toBe(0);
    expect(d.plan('export').code).toBe(0);
    validate(d);
    const rows = readFileSync(join(d.out, 'decisions.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(rows[0]).toMatchObject({ owner_reply: 'D1: b, p1 a', answered_by: 'agent:t1', owner_mode: 'tokens', owner_named: true });
  });

  test('should take the owner\'s words from stdin with --owner-reply -', () => {
    const d = driver();
    d.driveToGate();
    const ran = d.raw(['plan', 'answer', '--out', d.out, '--state', d.state, '--gate-rev', '1', '--reply', 'p1a', '--by', 'agent:t2', '--owner-reply', '-'], 'p1a\n');
    expect(ran.code).toBe(0);
    expect(ran.status).toBe('complete');
  });

  test('should refuse the owner\'s words that are not UTF-8, from a file or stdin (exit 2 USAGE), answering nothing', () => {
    const d = driver();
    d.driveToGate();
    const bytes = Buffer.from([0x70, 0x31, 0x61, 0x0a, 0xc3, 0x28, 0x0a]);
    writeFileSync(join(d.dir, 'words.bin'), bytes);
    const answer = ['plan', 'answer', '--out', d.out, '--state', d.state, '--gate-rev', '1', '--reply', 'p1a', '--by', 'agent:t3'];
    for (const ran of [d.raw([...answer, '--owner-reply-file', join(d.dir, 'words.bin')]), d.raw([...answer, '--owner-reply', '-'], bytes)]) {
      expect(ran.code).toBe(2);
      expect(codesOf(ran.stderr)).toEqual(['USAGE']);
      expect(ran.stderr).toContain('not UTF-8 text (line 2)');
    }
    expect(d.plan('status').stdout).toMatch(/^RUN: \S+ status=gate_pending /m);
  });

  test('should end the run incomplete with p1e, and export it valid', () => {
    const d = driver();
    d.driveToGate();
    const ran = d.plan('answer', '--gate-rev', '1', '--reply', 'p1e', '--by', 'human');
    expect(ran.status).toBe('incomplete');
    expect(d.plan('export').code).toBe(0);
    expect(validate(d)[0]).toMatch(/status=incomplete$/);
  });

  test('should rerun every phase with p1d and write gate_rev 2 with r2 decision ids', () => {
    const d = driver();
    d.driveToGate();
    const rerun = d.plan('answer', '--gate-rev', '1', '--reply', 'p1d', '--by', 'human');
    expect(rerun.status).toBe('awaiting_result');
    const gate = d.driveToGate();
    expect(gateRev(gate)).toBe(2);
    expect(d.plan('answer', '--gate-rev', '2', '--reply', 'as-is', '--by', 'human').status).toBe('complete');
    expect(d.plan('export').code).toBe(0);
    validate(d);
    const run = readFileSync(join(d.out, '.laneward-run'), 'utf8').split(' ')[0]!;
    const ids = readFileSync(join(d.out, 'decisions.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l).id);
    expect(ids).toEqual([`${run}-p1`, `${run}-r2-p1`]);
  });

  test('should answer with --json as one object', () => {
    const d = driver();
    d.driveToGate();
    const ran = d.plan('answer', '--gate-rev', '1', '--reply', 'as-is', '--by', 'human', '--json');
    expect(ran.code).toBe(0);
    expect(ran.lines).toHaveLength(1);
    expect(JSON.parse(ran.lines[0]!)).toMatchObject({ ok: true, status: 'complete', approved: [{ key: 'a' }] });
    const refused = d.plan('answer', '--gate-rev', '1', '--reply', 'as-is', '--by', 'human', '--json');
    expect(refused.code).toBe(3);
    expect(refused.lines).toHaveLength(1);
    expect(JSON.parse(refused.lines[0]!)).toMatchObject({ ok: false, status: 'refused', code: 'GATE_REV_STALE', runDir: d.out });
    // A usage error names no run directory, even with --out given.
    const usage = d.plan('answer', '--gate-rev', 'x', '--json');
    expect(usage.code).toBe(2);
    expect(usage.lines.map((line) => JSON.parse(line))).toEqual([expect.objectContaining({ ok: false, status: 'refused', code: 'USAGE', runDir: '-' })]);
  });

  test('should resume after the run directory moved', () => {
    const d = driver();
    d.driveToGate();
    const moved = join(d.dir, 'moved');
    execFileSync('mv', [d.out, moved]);
    const resumed = d.raw(['plan', 'resume', '--out', moved]);
    expect(resumed.code).toBe(0);
    expect(resumed.lines.at(-1)).toBe(`GSTACK_RESULT: skill=autoplan status=gate_pending run=${moved}`);
    expect(resumed.lines.find((l) => l.startsWith('GATE: '))).toContain(`file=${join(moved, 'gate.json')}`);
  });
});

/** The run's status as plan status prints it on its RUN: line. */
const runStatus = (d: PlanDriver) => /^RUN: \S+ status=(\S+) /.exec(d.plan('status').lines.find((l) => l.startsWith('RUN: ')) ?? '')?.[1];

describe('plan answer that applies nothing', () => {
  test('should let exactly one of two answers racing from two processes apply, whatever wins', async () => {
    for (let round = 0; round < 3; round++) {
      const d = driver();
      d.driveToGate();
      const race = ['p1c', 'p1a'].map((reply) => new Promise<{ reply: string; code: number | null; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [BUNDLE, 'plan', 'answer', '--out', d.out, '--state', d.state, '--gate-rev', '1', '--reply', reply, '--by', 'human'], { stdio: ['ignore', 'ignore', 'pipe'] });
        let stderr = '';
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.once('close', (code) => resolve({ reply, code, stderr }));
      }));
      const ends = await Promise.all(race);
      const won = ends.filter((e) => e.code === 0);
      expect(won, `round ${round}: ${JSON.stringify(ends)}`).toHaveLength(1);
      const lost = ends.find((e) => e.code !== 0)!;
      expect([lost.code, ...codesOf(lost.stderr)]).toEqual([3, 'GATE_REV_STALE']);
      expect(runStatus(d)).toBe(won[0]!.reply === 'p1a' ? 'complete' : 'gate_pending');
    }
  });
});

describe('plan answer --words-by', () => {
  test.each([
    ['an agent other than --by', ['--by', 'agent:lane-7', '--words-by', 'agent:captain']],
    ['an agent while --by is human', ['--by', 'human', '--words-by', 'agent:captain']],
    ['an agent while --by is absent', ['--words-by', 'agent:captain']],
  ])('should refuse --words-by naming %s (ANSWER_WORDS_BY_MISMATCH, exit 3), applying nothing, and take the agent\'s own', (_, args) => {
    const d = driver();
    d.driveToGate();
    const ran = d.plan('answer', '--gate-rev', '1', '--reply', 'p1a', ...args);
    expect(ran.code).toBe(3);
    expect(codesOf(ran.stderr)).toEqual(['ANSWER_WORDS_BY_MISMATCH']);
    expect(runStatus(d)).toBe('gate_pending');
    const own = d.plan('answer', '--gate-rev', '1', '--reply', 'p1a', '--by', 'agent:captain', '--words-by', 'agent:captain');
    expect(own.code).toBe(0);
    expect(own.status).toBe('complete');
  });
});

describe('plan export when the filesystem fails', () => {
  test.each(['plan.md', 'decisions.jsonl', 'run.json'])('should fail IO_ERROR naming %s when a directory stands there, and export or resume once it is gone', (name) => {
    for (const recover of ['export', 'resume']) {
      const d = driver();
      d.driveToGate();
      const path = join(d.out, name);
      mkdirSync(path);
      const failed = d.plan('export');
      expect(failed.code).toBe(1);
      expect(codesOf(failed.stderr)).toEqual(['IO_ERROR']);
      expect(failed.stderr).toContain(` at ${path})`);
      expect(failed.status).toBe('interrupted');
      rmdirSync(path);
      const again = d.plan(recover);
      expect(again.code, recover).toBe(0);
      expect(again.lines.filter((l) => l.startsWith('ARTIFACT_VALID: ')), recover).toHaveLength(1);
      validate(d);
    }
  });

  test.each([
    ['a rerun (p1d)', (d: PlanDriver) => d.plan('answer', '--gate-rev', '1', '--reply', 'p1d', '--by', 'human')],
    ['a revise', (d: PlanDriver) => d.plan('revise', '--plan', d.writePlan(PLAN.replace('batches of 500', 'batches of 100')))],
  ])('should resume a run that moved on by %s after a failed export without writing run.json, and export it at its next gate', (_, moveOn) => {
    const d = driver();
    d.driveToGate();
    mkdirSync(join(d.out, 'plan.md'));
    expect(codesOf(d.plan('export').stderr)).toEqual(['IO_ERROR']);
    rmdirSync(join(d.out, 'plan.md'));
    const moved = moveOn(d);
    expect(moved.code).toBe(0);
    expect(moved.status).toBe('awaiting_result');
    for (let i = 0; i < 2; i++) {
      const resumed = d.plan('resume');
      expect(resumed.code).toBe(0);
      expect(resumed.status).toBe('awaiting_result');
      expect(resumed.lines.filter((l) => l.startsWith('EXPORTED: '))).toEqual([]);
      expect(existsSync(join(d.out, 'run.json'))).toBe(false);
    }
    const gate = d.driveToGate();
    expect(gateRev(gate)).toBe(2);
    const exported = d.plan('export');
    expect(exported.code).toBe(0);
    expect(validate(d)[0]).toMatch(/status=gate_pending$/);
  });
});

describe('plan family', () => {
  test.each([
    ['claude-opus-4', 'anthropic'],
    ['openai/gpt-5', 'openai'],
    ['mystery-1', 'unknown'],
  ])('should print the family of %s', (model, family) => {
    const ran = laneward(['plan', 'family', model]);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toMatch(new RegExp(`^MODEL_FAMILY: ${model.replace('/', '\\/')} family=${family} source=`));
  });
});

void chmodSync;
void readdirSync;

describe('plan submit --record (hand-run reviews)', () => {
  const shapes: [string, (snap: string) => string, number][] = [
    ['the fence', (s) => `INPUT: ceo ${s}\n\`\`\`gstack-findings\n{"severity":"crit","title":"A"}\n{"severity":"info","title":"B"}\n\`\`\`\n`, 2],
    ['a table', (s) => `INPUT: ceo ${s}\n\n| Severity | Title | File |\n|---|---|---|\n| High | Races on retry | a.ts |\n| med | Slow path | - |\n`, 2],
    ['dash list items', (s) => `INPUT: ceo ${s}\n\n- [High] Races on retry\n- [Low] Naming\n`, 2],
    ['numbered list items', (s) => `INPUT: ceo ${s}\n\n1. [High] Races on retry\n2. [Medium] Slow path\n3. [Informational] Style\n`, 3],
    ['bold severity items', (s) => `INPUT: ceo ${s}\n\n1. **[Severity: High] Races on retry.** The retry loop re-reads.\n2. **[Severity: Low] Naming.** Prose.\n`, 2],
    ['bold finding headings', (s) => `INPUT: ceo ${s}\n\n**Finding 3 — High. Races on retry.** Prose.\n\n**Finding 4 — Medium. Slow path.** More.\n`, 2],
    ['No findings.', (s) => `INPUT: ceo ${s}\n\nNo findings.\n`, 0],
  ];

  test.each(shapes)('should bind %s with every finding counted', (_name, body, count) => {
    const d = driver();
    const context = d.plan('next', '--plan', join(d.dir, 'plan.md'));
    const native = context.attempts[0]!;
    const record = join(d.dir, 'record.md');
    writeFileSync(record, body(context.snapshot!));
    const bound = d.plan('submit', '--phase', 'ceo', '--voice', 'native', '--record', record, '--model', 'claude-opus-4');
    expect(bound.stderr).toBe('');
    expect(bound.lines.find((l) => l.startsWith('BOUND: '))).toMatch(new RegExp(`^BOUND: ${native.id} phase=ceo voice=native model=claude-opus-4 findings=${count} `));
  });

  test('should refuse a record in no known shape, never as zero findings', () => {
    const d = driver();
    const context = d.plan('next', '--plan', join(d.dir, 'plan.md'));
    const record = join(d.dir, 'record.md');
    writeFileSync(record, `INPUT: ceo ${context.snapshot}\n\nThe plan looks risky in places but mostly fine.\n`);
    const ran = d.plan('submit', '--phase', 'ceo', '--voice', 'native', '--record', record, '--model', 'claude-opus-4');
    expect(ran.code).toBe(3);
    expect(codesOf(ran.stderr)).toEqual(['RESULT_FINDINGS_MISSING']);
  });

  test('should bind a record without its INPUT line only with --attest, and validate with attested=1', () => {
    const d = driver();
    const context = d.plan('next', '--plan', join(d.dir, 'plan.md'));
    const record = join(d.dir, 'record.md');
    writeFileSync(record, '- [High] Races on retry\n');
    const refused = d.plan('submit', '--phase', 'ceo', '--voice', 'native', '--record', record, '--model', 'claude-opus-4');
    expect(codesOf(refused.stderr)).toEqual(['RESULT_RECEIPT_MISSING']);
    const attested = d.plan('submit', '--phase', 'ceo', '--voice', 'native', '--record', record, '--model', 'claude-opus-4', '--attest', 'reviewed by hand from the printed plan');
    expect(attested.code).toBe(0);
    const outside = context.attempts[1]!;
    d.writeResult(outside, context.snapshot!, []);
    d.submit(outside, 'gpt-5');
    d.driveToGate();
    d.plan('answer', '--gate-rev', '1', '--reply', 'as-is', '--by', 'human');
    expect(d.plan('export').lines.find((l) => l.startsWith('ARTIFACT_VALID: '))).toMatch(/ attested=1$/);
    expect(validate(d)[0]).toMatch(/ attested=1$/);
  });
});

describe('plan gate contents', () => {
  test('should make a twin pair one item, a disagreement one item, challenges approval items and keep urgent findings off the gate', () => {
    const d = driver();
    const gate = d.driveToGate((phase, voice) => {
      if (phase !== 'ceo') return [];
      if (voice === 'native') {
        return [
          { id: 'N1', severity: 'High', title: 'Batch writes are not atomic', fix: 'one transaction per batch' },
          { id: 'N2', severity: 'Low', title: 'Retry storms under load' },
          { id: 'N3', severity: 'Medium', title: 'Drop the importer entirely', user_challenge: true, changes: 'scope', fix: 'drop it' },
          { id: 'N4', severity: 'Critical', title: 'Tokens logged in plain text', urgent: true, suggested_owner: 'security' },
        ];
      }
      return [
        { id: 'O1', severity: 'Critical', title: 'Batch writes are not atomic' },
        { id: 'O2', severity: 'Critical', title: 'Retry storms under load' },
      ];
    });
    expect(gate.lines.find((l) => l.startsWith('GATE: '))).toMatch(/items=4 pending=4 /);
    const doc = JSON.parse(readFileSync(join(d.out, 'gate.json'), 'utf8'));
    expect(doc.items.map((i: { id: string; kind: string; recommended: string; keep: string }) => [i.id, i.kind, i.recommended, i.keep])).toEqual([
      ['d1', 'auto', 'a', 'b'],
      ['d2', 'auto', 'a', 'b'],
      ['uc1', 'approval', 'a', 'a'],
      ['p1', 'approval', 'b', 'a'],
    ]);
    expect(doc.items[1].title).toContain('severity disputed');
    const consensus = JSON.parse(readFileSync(join(d.out, 'ceo-consensus.json'), 'utf8'));
    expect([consensus.confirmed, consensus.disagree, consensus.new, consensus.native_only]).toEqual([1, 1, 0, 2]);
    // p1a leaves the challenge unanswered: an approval item stays pending and so does the gate.
    const partial = d.plan('answer', '--gate-rev', '1', '--reply', 'p1a', '--by', 'human');
    expect(partial.status).toBe('gate_pending');
    const done = d.plan('answer', '--gate-rev', '1', '--reply', 'uc1a', '--by', 'human');
    expect(done.status).toBe('complete');
    expect(d.plan('export').code).toBe(0);
    validate(d);
    expect(readFileSync(join(d.out, 'plan.md'), 'utf8')).toContain('- [Critical] Tokens logged in plain text');
    const urgent = laneward(['artifact', 'urgent', join(d.out, 'findings.jsonl')]);
    expect(urgent.stdout).toContain('Tokens logged in plain text');
  });
});
