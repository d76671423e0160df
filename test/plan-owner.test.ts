import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { codesOf, ensureBuilt, laneward } from './helpers/cli.ts';
import { PlanDriver, PLAN } from './helpers/plan-driver.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('plan-owner');
let n = 0;
const driver = () => {
  const d = new PlanDriver(root, `o${++n}`);
  d.writePlan();
  return d;
};
const runOf = (d: PlanDriver) => readFileSync(join(d.out, '.laneward-run'), 'utf8').split(' ')[0]!;
const edit = (d: PlanDriver, extra: string) => d.writePlan(PLAN.replace('3. Write the rows in batches of 500.', `3. Write the rows in batches of 500.\n4. ${extra}`));
const high = (title: string) => ({ id: 'F1', severity: 'High', title });
const carryLines = (lines: readonly string[]) => lines.filter((l) => /^(CARRIED|CARRY):/.test(l));

function validate(d: PlanDriver): string {
  const ran = laneward(['artifact', 'validate', d.out]);
  expect(ran.stderr).toBe('');
  expect(ran.code).toBe(0);
  return ran.stdout.trim();
}

beforeAll(() => ensureBuilt());

describe('plan revise and carry-forward', () => {
  test('should carry the owner\'s answer to gate_rev 2 when nothing new needs it, and export it valid', () => {
    const d = driver();
    d.driveToGate();
    expect(d.plan('answer', '--gate-rev', '1', '--reply', 'as-is', '--by', 'human').status).toBe('complete');
    edit(d, 'Log each batch.');
    const revised = d.plan('revise', '--plan', join(d.dir, 'plan.md'));
    expect(revised.code).toBe(0);
    expect(revised.lines).toContain(`REVISED: run=${runOf(d)} plan_rev=2 reopened=ceo,eng incorporated=- pending=0`);
    expect(revised.status).toBe('awaiting_result');
    // Prompts and consensus of the reopened phases are kept under .r1 names.
    expect(existsSync(join(d.out, 'ceo-native-prompt.r1.md'))).toBe(true);
    expect(existsSync(join(d.out, 'eng-consensus.r1.json'))).toBe(true);
    const gate = d.driveToGate();
    expect(gate.status).toBe('complete');
    const line = carryLines(gate.lines);
    expect(line).toEqual(['CARRIED: gate_rev=2 <- gate_rev=1 words="as-is" by=human reason=nothing new needs the owner']);
    const at = gate.lines.indexOf(line[0]!);
    expect(gate.lines[at + 1]).toBe(`APPROVED: ${runOf(d)}-r2-p1 a`);
    expect(d.plan('export').code).toBe(0);
    validate(d);
    const rows = readFileSync(join(d.out, 'decisions.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(rows.map((r) => r.id)).toEqual([`${runOf(d)}-p1`, `${runOf(d)}-r2-p1`]);
    expect(rows[1]).toMatchObject({ chosen: 'a', answered_by: 'agent:laneward', carried_gate_from: `${runOf(d)}-p1`, carried_gate_rev: 1, carried_answered_by: 'human' });
  });

  test('should refuse to carry a revision that was itself carried', () => {
    const d = driver();
    d.driveToGate();
    d.plan('answer', '--gate-rev', '1', '--reply', 'as-is', '--by', 'human');
    edit(d, 'Log each batch.');
    d.plan('revise', '--plan', join(d.dir, 'plan.md'));
    d.driveToGate();
    edit(d, 'Log each batch twice.');
    d.plan('revise', '--plan', join(d.dir, 'plan.md'));
    const third = d.driveToGate();
    expect(carryLines(third.lines)).toEqual(['CARRY: no (gate_rev 2 was itself carried)']);
    expect(third.status).toBe('gate_pending');
  });

  type Case = [string, (d: PlanDriver) => void, string, (phase: string, voice: string) => object[]];
  const none = () => [];
  const cases: Case[] = [
    ['carry-forward is off', (d) => d.plan('answer', '--gate-rev', '1', '--reply', 'as-is', '--by', 'human'), 'carry-forward is off for this run (--no-carry-forward)', none],
    ['the gate was held, not approved', (d) => d.plan('answer', '--gate-rev', '1', '--reply', 'p1c', '--by', 'human'), 'gate_rev 1 was not approved (p1c)', none],
    ['the words were an agent\'s own', (d) => d.plan('answer', '--gate-rev', '1', '--reply', 'p1a', '--by', 'agent:cap', '--words-by', 'agent:cap'), "the words at gate_rev 1 were agent:cap's, not the owner's", none],
    ['a new item needs the owner', (d) => d.plan('answer', '--gate-rev', '1', '--reply', 'as-is', '--by', 'human'), 'new item d1 needs the owner (the words were as_is, which carries no new item)', (p, v) => (p === 'eng' && v === 'native' ? [high('No retries')] : [])],
    ['an item was left pending', (d) => d.plan('answer', '--gate-rev', '1', '--reply', 'p1a', '--by', 'human'), 'gate_rev 1 left uc1 pending', (p, v) => (p === 'ceo' && v === 'native' ? [{ severity: 'Medium', title: 'Drop the importer', user_challenge: true, changes: 'scope' }] : [])],
    ['an urgent finding is open', (d) => d.plan('answer', '--gate-rev', '1', '--reply', 'as-is', '--by', 'human'), 'an urgent finding is open', (p, v) => (p === 'ceo' && v === 'native' ? [{ ...high('Secrets in logs'), urgent: true, suggested_owner: 'sec' }] : [])],
  ];

  test.each(cases)('should refuse to carry when %s', (name, answer, why, second) => {
    const d = driver();
    const first = d.plan('next', '--plan', join(d.dir, 'plan.md'), ...(name === 'carry-forward is off' ? ['--no-carry-forward'] : []));
    expect(first.code).toBe(0);
    // The pending item has to be on the first gate: that drive raises the challenge too.
    d.driveToGate(name === 'an item was left pending' ? second : none);
    answer(d);
    edit(d, 'Log each batch.');
    expect(d.plan('revise', '--plan', join(d.dir, 'plan.md')).code).toBe(0);
    const gate = d.driveToGate(second);
    const lines = carryLines(gate.lines);
    expect(lines).toHaveLength(1);
    expect(lines[0]!.startsWith(`CARRY: no (${why}`)).toBe(true);
    expect(gate.status).toBe('gate_pending');
  });

  test('should refuse to carry when the plan file changed after the revise', () => {
    const d = driver();
    d.driveToGate();
    d.plan('answer', '--gate-rev', '1', '--reply', 'as-is', '--by', 'human');
    edit(d, 'Log each batch.');
    d.plan('revise', '--plan', join(d.dir, 'plan.md'));
    // An edit after the revise: the gate must go to the owner. driveToGate re-reads --plan,
    // which changes nothing in the run; only the file moved.
    writeFileSync(join(d.dir, 'plan.md'), `${readFileSync(join(d.dir, 'plan.md'), 'utf8')}\nA later note.\n`);
    const gate = d.driveToGate();
    expect(carryLines(gate.lines)).toEqual(['CARRY: no (the plan file changed after the revise that took the changes)']);
    expect(gate.lines.some((l) => l.startsWith('PLAN_CHANGED: '))).toBe(true);
  });

  test('should incorporate an accepted change, refuse an unchanged plan and unknown ids, settle and withdraw', () => {
    const d = driver();
    d.driveToGate((p, v) => (p === 'eng' && v === 'outside' ? [high('No retries'), { ...high('No metrics'), id: 'F2' }, { ...high('No alerts'), id: 'F3' }] : []));
    const answer = d.plan('answer', '--gate-rev', '1', '--reply', 'rec', '--by', 'human');
    expect(answer.lines.filter((l) => l.startsWith('APPLY: '))).toHaveLength(3);
    const run = runOf(d);
    expect(codesOf(d.plan('revise', '--plan', join(d.dir, 'plan.md'), '--incorporates', `${run}-d1`).stderr)).toEqual(['PLAN_UNCHANGED']);
    expect(codesOf(d.plan('revise', '--settle', `${run}-d9`).stderr)).toEqual(['DECISION_UNKNOWN']);
    expect(d.plan('revise', '--settle', `${run}-d2`).lines).toContain(`SETTLED: ${run}-d2 pending=2`);
    expect(d.plan('revise', '--withdraw', `${run}-d3`).lines).toContain(`WITHDRAWN: ${run}-d3 pending=1`);
    expect(codesOf(d.plan('next').stderr)).toEqual(['PLAN_AMEND_PENDING']);
    edit(d, 'Retry a failed batch twice.');
    const revised = d.plan('revise', '--plan', join(d.dir, 'plan.md'), '--incorporates', `${run}-d1`);
    expect(revised.lines).toContain(`REVISED: run=${run} plan_rev=2 reopened=ceo,eng incorporated=${run}-d1 pending=0`);
    const gate = d.driveToGate();
    expect(gate.lines.find((l) => l.startsWith('GATE: '))).toMatch(/^GATE: gate_rev=2 /);
    expect(codesOf(d.plan('revise', '--plan', join(d.dir, 'plan.md'), '--settle', 'x').stderr)).toEqual(['USAGE']);
  });

  test('should keep an archive under a .v2 name when the .r1 name holds other bytes', () => {
    const d = driver();
    d.driveToGate();
    d.plan('answer', '--gate-rev', '1', '--reply', 'p1c', '--by', 'human');
    writeFileSync(join(d.out, 'ceo-consensus.r1.json'), 'someone else wrote this');
    edit(d, 'Log each batch.');
    d.plan('revise', '--plan', join(d.dir, 'plan.md'));
    expect(readFileSync(join(d.out, 'ceo-consensus.r1.json'), 'utf8')).toBe('someone else wrote this');
    expect(JSON.parse(readFileSync(join(d.out, 'ceo-consensus.r1.v2.json'), 'utf8')).phase).toBe('ceo');
  });
});

describe('plan recommend', () => {
  test('should bump rec_rev and make rec name the rec_hash the owner saw', () => {
    const d = driver();
    const gate = d.driveToGate((p, v) => (p === 'eng' && v === 'outside' ? [high('No retries')] : []));
    expect(gate.lines.find((l) => l.startsWith('GATE_REC: '))).toMatch(/^GATE_REC: rec_rev=1 rec_hash=[0-9a-f]{16}$/);
    const changed = d.plan('recommend', '--item', 'd1', '--option', 'b');
    expect(changed.code).toBe(0);
    const line = changed.lines.find((l) => l.startsWith('RECOMMEND: '))!;
    expect(line).toMatch(new RegExp(`^RECOMMEND: ${runOf(d)}-d1 a -> b rec_rev=2 rec_hash=[0-9a-f]{16}$`));
    const hash = /rec_hash=([0-9a-f]+)/.exec(line)![1]!;
    expect(codesOf(d.plan('answer', '--gate-rev', '1', '--reply', 'rec', '--by', 'human').stderr)).toEqual(['GATE_REC_STALE']);
    expect(codesOf(d.plan('answer', '--gate-rev', '1', '--reply', 'p1b', '--by', 'human', '--rec-hash', 'ffff').stderr)).toEqual(['GATE_REC_STALE']);
    const ok = d.plan('answer', '--gate-rev', '1', '--reply', 'rec', '--by', 'human', '--rec-hash', hash);
    expect(ok.code).toBe(0);
    expect(ok.lines.filter((l) => l.startsWith('APPLY: '))).toEqual([]);
    expect(codesOf(d.plan('recommend', '--item', 'd9', '--option', 'a').stderr)).toEqual(['PHASE_NOT_AWAITING']);
  });
});

describe('plan --ceo-only', () => {
  test('should review the CEO phase alone and end reviewed with a validated run directory', () => {
    const d = driver();
    const first = d.plan('next', '--plan', join(d.dir, 'plan.md'), '--ceo-only');
    expect(first.lines.find((l) => l.startsWith('PHASE: '))).toMatch(/order=ceo$/);
    const [native, outside] = first.attempts as [typeof first.attempts[0], typeof first.attempts[0]];
    d.writeResult(native, first.snapshot!, [{ severity: 'Medium', title: 'Drop the importer', user_challenge: true, changes: 'scope' }, high('No retries')]);
    d.submit(native, 'claude-opus-4');
    d.writeResult(outside, first.snapshot!, []);
    d.submit(outside, 'gpt-5');
    const done = d.plan('next');
    expect(done.code).toBe(0);
    expect(done.status).toBe('reviewed');
    expect(done.lines.find((l) => l.startsWith('REVIEWED: '))).toBe(`REVIEWED: run=${runOf(d)} phase=ceo confirmed=0 new=0 native_only=2`);
    expect(validate(d)).toBe(`ARTIFACT_VALID: run=${runOf(d)} status=reviewed`);
    expect(existsSync(join(d.out, 'gate.json'))).toBe(false);
    const manifest = JSON.parse(readFileSync(join(d.out, 'run.json'), 'utf8'));
    expect(manifest.artifacts['ceo-review.md'].path).toBe('ceo-review.md');
    const rows = readFileSync(join(d.out, 'decisions.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    // The challenge is kept at the plan's direction; the open High finding gets no row.
    expect(rows.map((r) => [r.label, r.kind, r.status, r.chosen])).toEqual([['uc1', 'auto', 'auto_kept', 'a']]);
    const tasks = readFileSync(join(d.out, 'tasks.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(tasks.every((t) => t.blocked_by.length === 0)).toBe(true);
    for (const [sub, args] of [['answer', ['--gate-rev', '1', '--reply', 'rec']], ['recommend', ['--item', 'uc1', '--option', 'b']], ['revise', ['--plan', join(d.dir, 'plan.md')]]] as const) {
      const ran = d.plan(sub, ...args);
      expect(ran.code, sub).toBe(3);
      expect(codesOf(ran.stderr), sub).toEqual(['CEO_ONLY_NO_GATE']);
    }
  });

  test('should refuse --ceo-only beside scope flags or a marker, and after a full run started', () => {
    const d = driver();
    expect(codesOf(d.plan('next', '--plan', join(d.dir, 'plan.md'), '--ceo-only', '--ui').stderr)).toEqual(['CEO_ONLY_CONFLICT']);
    d.writePlan(`<!-- laneward-scope: ui=yes dx=no -->\n${PLAN}`);
    expect(codesOf(d.plan('next', '--plan', join(d.dir, 'plan.md'), '--ceo-only').stderr)).toEqual(['CEO_ONLY_CONFLICT']);
    expect(existsSync(join(d.out, '.laneward-run'))).toBe(false);
    d.writePlan();
    d.plan('next', '--plan', join(d.dir, 'plan.md'));
    expect(codesOf(d.plan('next', '--ceo-only').stderr)).toEqual(['CEO_ONLY_AFTER_INIT']);
  });
});

describe('plan timing', () => {
  test('should estimate from earlier runs of the state root, print CYCLE at the gate and skip on an ephemeral root', () => {
    const a = new PlanDriver(join(root, 'timing'), 'a');
    a.writePlan();
    expect(a.plan('next', '--plan', join(a.dir, 'plan.md')).lines).toContain('ESTIMATE: no history');
    const gate = a.driveToGate();
    expect(gate.lines.find((l) => l.startsWith('CYCLE: '))).toMatch(new RegExp(`^CYCLE: run=${runOf(a)} wall_s=\\d+ phases=ceo:\\d+s,eng:\\d+s$`));
    const b = new PlanDriver(join(root, 'timing'), 'b');
    b.writePlan();
    expect(b.plan('next', '--plan', join(b.dir, 'plan.md')).lines.find((l) => l.startsWith('ESTIMATE: '))).toMatch(/^ESTIMATE: ceo=\d+s eng=\d+s total=\d+s \(medians of the last 10 runs per phase\)$/);
    const c = new PlanDriver(join(root, 'timing'), 'c');
    c.writePlan();
    c.env = { LANEWARD_EPHEMERAL: '1' };
    expect(c.plan('next', '--plan', join(c.dir, 'plan.md')).lines).toContain('ESTIMATE: skipped (state root is ephemeral; set LANEWARD_STATE_ROOT)');
    a.plan('answer', '--gate-rev', '1', '--reply', 'as-is', '--by', 'human');
    expect(a.plan('export').code).toBe(0);
    const timing = JSON.parse(readFileSync(join(a.out, 'timing.json'), 'utf8'));
    expect(timing.phases.map((p: { phase: string }) => p.phase)).toEqual(['ceo', 'eng']);
    expect(typeof timing.phases[0].wall_s).toBe('number');
  });
});

describe('plan checkpoints', () => {
  test('should publish generations, list them, and restore the newest valid one into a new directory', () => {
    const d = driver();
    const ck = join(d.dir, 'checkpoints');
    d.env = { LANEWARD_CHECKPOINT_DIR: ck };
    const gate = d.driveToGate();
    expect(gate.lines.some((l) => /^CHECKPOINT: gen=\d{12} seq=\d+ dir=/.test(l))).toBe(true);
    const from = join(ck, runOf(d));
    const current = JSON.parse(readFileSync(join(from, 'current.json'), 'utf8'));
    const listed = laneward(['plan', 'checkpoints', '--from', from]);
    const lines = listed.stdout.trim().split('\n');
    expect(lines[0]).toBe(`CHECKPOINT: gen=${current.generation} seq=${current.seq} files=${lines[0]!.match(/files=(\d+)/)![1]} status=ok current=yes`);
    // Damage the newest generation: restore takes the one before it.
    const newest = join(from, 'generations', current.generation);
    rmSync(join(newest, 'gate.json'), { force: true });
    expect(laneward(['plan', 'checkpoints', '--from', from]).stdout.split('\n')[0]).toBe(`CHECKPOINT: gen=${current.generation} seq=${current.seq} files=0 status=invalid (gate.json is missing) current=yes`);
    const moved = join(d.dir, 'restored');
    d.env = {};
    const restored = d.raw(['plan', 'resume', '--out', moved, '--from', from, '--state', join(d.dir, 'state2')]);
    expect(restored.code).toBe(0);
    expect(restored.lines[0]).toMatch(new RegExp(`^RESTORED: run=${runOf(d)} generation=\\d{12} from=`));
    expect(restored.lines[0]).not.toContain(current.generation);
    // The restored run goes on, on its new state root.
    const context = d.raw(['plan', 'next', '--out', moved]);
    expect(context.code).toBe(0);
  });

  test('should refuse a checkpoint directory inside the run and a checkpoint with no valid generation', () => {
    const d = driver();
    d.env = { LANEWARD_CHECKPOINT_DIR: join(d.out, 'ck') };
    const ran = d.plan('next', '--plan', join(d.dir, 'plan.md'));
    expect(ran.code).toBe(3);
    expect(codesOf(ran.stderr)).toEqual(['CHECKPOINT_OVERLAP']);
    d.env = { LANEWARD_CHECKPOINT_DIR: join(d.dir, 'ck') };
    d.plan('next', '--plan', join(d.dir, 'plan.md'));
    const from = join(d.dir, 'ck', runOf(d));
    for (const gen of readdirSync(join(from, 'generations'))) writeFileSync(join(from, 'generations', gen, 'manifest.json'), '{');
    d.env = {};
    const restore = d.raw(['plan', 'resume', '--out', join(d.dir, 'again'), '--from', from]);
    expect(restore.code).toBe(3);
    expect(codesOf(restore.stderr)).toEqual(['CHECKPOINT_INVALID']);
  });
});

describe('plan carry check (post-cap delta)', () => {
  function capped(): { d: PlanDriver; check: { id: string; result: string } } {
    const d = driver();
    d.plan('next', '--plan', join(d.dir, 'plan.md'), '--round-cap', '1');
    d.driveToGate();
    d.plan('answer', '--gate-rev', '1', '--reply', 'as-is', '--by', 'human');
    edit(d, 'Log each batch.');
    const revised = d.plan('revise', '--plan', join(d.dir, 'plan.md'));
    expect(revised.lines).toContain(`REVISED: run=${runOf(d)} plan_rev=2 reopened=- capped=yes incorporated=- pending=0`);
    const gate = d.plan('next');
    expect(gate.status).toBe('gate_pending');
    const line = gate.lines.find((l) => l.startsWith('CARRY_CHECK: '))!;
    const m = /^CARRY_CHECK: (\S+) prompt=(\S+) result=(\S+) model_family=differs from anthropic,openai$/.exec(line)!;
    expect(m).not.toBeNull();
    const prompt = readFileSync(join(d.out, m[2]!), 'utf8');
    expect(prompt).toContain('+ 4. Log each batch.');
    expect(existsSync(join(d.out, 'plan-at-gate.r1.md'))).toBe(true);
    const doc = JSON.parse(readFileSync(join(d.out, 'gate.json'), 'utf8'));
    expect(doc.items.map((i: { id: string }) => i.id)).toEqual(['d1', 'p1']);
    expect(doc.items[0].title).toBe('Plan changed after eng cap (unreviewed since gate_rev 1)');
    return { d, check: { id: m[1]!, result: join(d.out, m[3]!) } };
  }

  const resultFor = (file: string, findings: object[]) => {
    const prompt = readFileSync(file.replace(/\.a\d+\.md$/, '-prompt.md'), 'utf8');
    const snap = /INPUT: carry-check ([0-9a-f]{64})/.exec(prompt)![1]!;
    writeFileSync(file, [`INPUT: carry-check ${snap}`, '```gstack-findings', ...findings.map((f) => JSON.stringify(f)), '```', ''].join('\n'));
  };

  test('should carry after a passing check by another family, and record the verdict', () => {
    const { d, check } = capped();
    resultFor(check.result, [{ severity: 'Low', title: 'Log format unspecified' }]);
    expect(codesOf(d.plan('check', '--attempt', check.id, '--result', check.result, '--model', 'claude-haiku').stderr)).toEqual(['MODEL_FAMILY_CONFLICT']);
    const ran = d.plan('check', '--attempt', check.id, '--result', check.result, '--model', 'gemini-2.5-pro');
    expect(ran.code).toBe(0);
    expect(ran.lines.find((l) => l.startsWith('CARRY_CHECK: '))).toMatch(new RegExp(`^CARRY_CHECK: ${check.id} verdict=pass findings=1 severe=0 sha256=[0-9a-f]{12}$`));
    expect(ran.lines.some((l) => l.startsWith('CARRIED: gate_rev=2 <- gate_rev=1 '))).toBe(true);
    expect(ran.status).toBe('complete');
    expect(d.plan('export').code).toBe(0);
    validate(d);
    expect(JSON.parse(readFileSync(join(d.out, 'gate.json'), 'utf8')).carry_check).toMatchObject({ attempt: check.id, verdict: 'pass', model: 'gemini-2.5-pro' });
    const rows = readFileSync(join(d.out, 'decisions.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(rows.filter((r) => r.gate_rev === 2).every((r) => r.carry_check?.verdict === 'pass')).toBe(true);
    expect(readFileSync(join(d.out, 'decisions.tsv'), 'utf8')).toContain('\tcarry-check\tgate_rev 2 carry checked\t');
  });

  test.each([
    ['a High finding', ['--model', 'gemini-2.5-pro'], [{ severity: 'High', title: 'Logging leaks rows' }], 'the carry check found 1 High or Critical finding(s)'],
    ['an unavailable reviewer', [], [], 'the carry check was unavailable: no third family here'],
  ])('should leave the gate to the owner after %s', (_name, extra, findings, why) => {
    const { d, check } = capped();
    resultFor(check.result, findings);
    const args = extra.length === 0 ? ['--unavailable', 'no third family here'] : ['--result', check.result, ...extra];
    const ran = d.plan('check', '--attempt', check.id, ...args);
    expect(ran.code).toBe(0);
    expect(ran.lines).toContain(`CARRY: no (${why})`);
    expect(ran.status).toBe('gate_pending');
    expect(codesOf(d.plan('check', '--attempt', check.id, '--unavailable', 'again').stderr)).toEqual(['PHASE_NOT_AWAITING']);
  });

  test('should void a pending check when the owner answers the gate', () => {
    const { d, check } = capped();
    expect(d.plan('answer', '--gate-rev', '2', '--reply', 'as-is', '--by', 'human').status).toBe('complete');
    resultFor(check.result, []);
    expect(codesOf(d.plan('check', '--attempt', check.id, '--result', check.result, '--model', 'gemini-2.5-pro').stderr)).toEqual(['PHASE_NOT_AWAITING']);
  });

  test('should refuse a check over --carry-check-cap and leave the gate to the owner', () => {
    const d = driver();
    d.plan('next', '--plan', join(d.dir, 'plan.md'), '--round-cap', '1', '--estimate-usd', '3', '--carry-check-cap', '2');
    d.driveToGate();
    d.plan('answer', '--gate-rev', '1', '--reply', 'as-is', '--by', 'human');
    edit(d, 'Log each batch.');
    d.plan('revise', '--plan', join(d.dir, 'plan.md'));
    const gate = d.plan('next');
    expect(carryLines(gate.lines)).toEqual(['CARRY: no (the carry check would reserve 3.00, over --carry-check-cap 2.00)']);
  });
});
