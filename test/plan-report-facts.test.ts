import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { AttemptRecord, RunRecord } from '../formats/review/run-record.ts';
import type { OrphanEnd } from '../formats/supervision/child-record.ts';
import type { Outcome } from '../workers/supervise/outcome.ts';
import { factLine, reportLines } from '../main/cli/plan-lines.ts';
import { stopFixArgv, stopSummary, stopWords } from '../main/cli/plan-stop-lines.ts';
import type { ReportFact } from '../main/plan/core/report-facts.ts';
import { answerRun, locateRun, planAnswer, readPlanEnv, planExport, planNext, planStatus, planSubmit, type PlanReport } from '../main/plan/index.ts';
import { orphanVerdict, type OrphanFindings } from '../main/plan/orphan-verdict.ts';
import { outcomeVerdict } from '../main/plan/outcome-facts.ts';
import { roundOf, stopOf } from '../main/plan/run-round.ts';
import { startOptions } from '../main/plan/run.ts';
import { PLAN } from './helpers/plan-driver.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('report-facts');

/**
 * The fields whose text the record itself keeps (a journaled reason, the owner's or an
 * item's words, an error's message, the settings' SESSION_KIND line, the scope detector's
 * reason): every other string of a report fact is one token (an id, code, hash or path).
 */
const FREE_TEXT = new Set(['why', 'uiWhy', 'dxWhy', 'title', 'words', 'detail', 'note']);

/** Every string of `value` that is not one token, by its path in the object. */
function prose(value: unknown, path: string, out: string[] = []): string[] {
  if (typeof value === 'string') {
    const key = path.split('.').at(-1)!.replace(/\[\d+\]$/, '');
    if (/\s/.test(value) && !FREE_TEXT.has(key)) out.push(`${path}=${JSON.stringify(value)}`);
  } else if (Array.isArray(value)) value.forEach((v, i) => prose(v, `${path}[${i}]`, out));
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) prose(v, `${path}.${k}`, out);
  return out;
}

/** Each fact list of a report holds objects (facts), and no fact carries a sentence. */
function factsOnly(report: PlanReport): string[] {
  const found: string[] = [];
  for (const list of ['notes', 'scope', 'carry', 'after'] as const) {
    for (const [i, fact] of report[list].entries()) {
      if (typeof fact !== 'object' || fact === null || typeof (fact as { fact?: unknown }).fact !== 'string') found.push(`${list}[${i}] is not a fact: ${JSON.stringify(fact)}`);
      else prose(fact, `${list}[${i}]`, found);
    }
  }
  return found;
}

describe('plan report facts', () => {
  test('should carry no line or sentence in any report of a run driven from its first next to its export', async () => {
    const dir = join(root, 'driven');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'plan.md'), PLAN);
    // Checkpoints on and an unknown session kind: their facts are in the reports too.
    const planEnv = readPlanEnv({ LANEWARD_CHECKPOINT_DIR: join(dir, 'ck'), LANEWARD_SESSION_KIND: 'robot' }, dir, join(dir, 'state'));
    const out = join(dir, 'run');
    const reports: PlanReport[] = [];
    let report = await planNext({ out, plan: join(dir, 'plan.md') }, planEnv);
    reports.push(report);
    while (report.status === 'awaiting_result') {
      for (const a of report.attempts) {
        writeFileSync(a.result, `INPUT: ${a.phase} ${report.phase!.snapshot}\n\n\`\`\`gstack-findings\n{"id":"F1","severity":"Medium","title":"a finding of ${a.voice}","file":"src/a.ts","line":1}\n\`\`\`\n`);
        reports.push(await planSubmit({ out, phase: a.phase, voice: a.voice, attempt: a.id, result: a.result, model: a.voice === 'native' ? 'claude-test' : 'gpt-test' }, planEnv));
      }
      report = await planNext({ out }, planEnv);
      reports.push(report);
    }
    expect(report.status).toBe('gate_pending');
    reports.push(await planAnswer({ out, gateRev: report.gate!.rev, reply: 'as-is', by: 'human' }, planEnv));
    reports.push(await planExport({ out }, planEnv));
    reports.push(planStatus({ out }, planEnv));
    const kinds = new Set(reports.flatMap((r) => [...r.notes, ...r.scope, ...r.carry, ...r.after].map((f) => f.fact)));
    // The report kinds this run went through, so the check below is over real facts.
    for (const kind of ['session_kind_unknown', 'estimate', 'scope', 'cycle', 'checkpoint', 'exported', 'artifact_valid', 'run_status', 'phase_status'] as const) expect(kinds).toContain(kind);
    expect(reports.flatMap(factsOnly)).toEqual([]);
    // The export's own lines, worded at the edge from its facts.
    const exported = reportLines(reports.at(-2)!, true);
    expect(exported.filter((l) => l.startsWith('EXPORTED: '))).toEqual([`EXPORTED: run=${report.run} files=12 run_json=${join(out, 'run.json')}`]);
    expect(exported.filter((l) => l.startsWith('ARTIFACT_VALID: '))).toEqual([`ARTIFACT_VALID: run=${report.run} status=complete`]);
  });

  test('should answer a run the caller located once and give back the record the answer committed', async () => {
    const dir = join(root, 'answer');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'plan.md'), PLAN);
    const planEnv = readPlanEnv({}, dir, join(dir, 'state'));
    const out = join(dir, 'run');
    let report = await planNext({ out, plan: join(dir, 'plan.md') }, planEnv);
    while (report.status === 'awaiting_result') {
      for (const a of report.attempts) {
        writeFileSync(a.result, `INPUT: ${a.phase} ${report.phase!.snapshot}\n\n\`\`\`gstack-findings\n\`\`\`\n`);
        await planSubmit({ out, phase: a.phase, voice: a.voice, attempt: a.id, result: a.result, model: a.voice === 'native' ? 'claude-test' : 'gpt-test' }, planEnv);
      }
      report = await planNext({ out }, planEnv);
    }
    const located = locateRun(out, planEnv);
    const { record } = await answerRun(located, { out, gateRev: located.record.gate!.rev, reply: 'as-is', by: 'human' }, planEnv);
    const after = locateRun(out, planEnv).record;
    expect([record.state, record.seq]).toEqual([after.state, after.seq]);
    expect(record.seq).toBeGreaterThan(located.record.seq);
    await expect(answerRun(located, { out, gateRev: undefined, reply: 'as-is' }, planEnv)).rejects.toMatchObject({ code: 'USAGE' });
  });

  // The exact lines each fact printed as before facts (the CLI tests pin them end to end).
  test.each<[string, ReportFact, string]>([
    ['a plan changed since its review', { fact: 'plan_changed', since: 'review', source: 'p.md', sha256: 'a'.repeat(64), reviewed: 'b'.repeat(64) }, `PLAN_CHANGED: p.md sha256=${'a'.repeat(12)} reviewed=${'b'.repeat(12)}`],
    ['a plan changed before an answer', { fact: 'plan_changed', since: 'answer', source: 'p.md', sha256: 'a'.repeat(64), reviewed: 'b'.repeat(64) }, `PLAN_SOURCE_CHANGED: p.md sha256=${'a'.repeat(12)} reviewed=${'b'.repeat(12)}`],
    ['an ephemeral estimate', { fact: 'estimate', durable: false, phases: [], history: 10 }, 'ESTIMATE: skipped (state root is ephemeral; set LANEWARD_STATE_ROOT)'],
    ['no history', { fact: 'estimate', durable: true, phases: [{ phase: 'ceo', seconds: null }], history: 10 }, 'ESTIMATE: no history'],
    ['an estimate', { fact: 'estimate', durable: true, phases: [{ phase: 'ceo', seconds: 61.4 }, { phase: 'eng', seconds: null }], history: 10 }, 'ESTIMATE: ceo=61s eng=? total=61s (medians of the last 10 runs per phase)'],
    ['a voice with no code', { fact: 'voice', attempt: 'r-a2', phase: 'ceo', voice: 'outside', status: 'unavailable', code: null }, 'VOICE: r-a2 phase=ceo voice=outside status=unavailable'],
    ['a voice with a code', { fact: 'voice', attempt: 'r-a2', phase: 'ceo', voice: 'outside', status: 'failed', code: 'LEASE_EXPIRED' }, 'VOICE: r-a2 phase=ceo voice=outside status=failed code=LEASE_EXPIRED'],
    ['a cycle', { fact: 'cycle', run: 'r', wallS: 12.6, phases: [{ phase: 'ceo', seconds: 4.4 }, { phase: 'eng', seconds: 5.5 }] }, 'CYCLE: run=r wall_s=13 phases=ceo:4s,eng:6s'],
    ['a revise', { fact: 'revised', run: 'r', planRev: 2, reopened: [], capped: true, incorporated: ['r-d1'], pending: 0 }, 'REVISED: run=r plan_rev=2 reopened=- capped=yes incorporated=r-d1 pending=0'],
    ['a release', { fact: 'released', attempt: 'r-a1', phase: 'ceo', voice: 'outside', freedUsd: 2 }, 'RELEASED: r-a1 phase=ceo voice=outside freed=2.00'],
    ['a carry', { fact: 'carried', gateRev: 2, fromRev: 1, words: 'as-is', by: null }, 'CARRIED: gate_rev=2 <- gate_rev=1 words="as-is" by=unrecorded reason=nothing new needs the owner'],
    ['a carry check with no plan families', { fact: 'carry_check_started', attempt: 'r-a9', prompt: 'p.md', result: 'r.md', families: [] }, 'CARRY_CHECK: r-a9 prompt=p.md result=r.md model_family=differs from the plan reviewers'],
    ['an export attested', { fact: 'artifact_valid', run: 'r', status: 'complete', attested: 2 }, 'ARTIFACT_VALID: run=r status=complete attested=2'],
    ['a checkpoint already there', { fact: 'checkpoint', generation: '000000000007', seq: 7, dir: null }, 'CHECKPOINT: gen=000000000007 seq=7 already'],
    ['a checkpoint that failed', { fact: 'checkpoint_failed', detail: 'EACCES:\n denied' }, 'CHECKPOINT: failed EACCES: denied'],
    ['a trail that failed', { fact: 'trail_failed', detail: 'ENOSPC  no space' }, 'TRAIL: failed ENOSPC no space'],
  ])('should word %s as its line', (_name, fact, line) => {
    expect(factLine(fact)).toBe(line);
  });
});

const attempt = (id: string, over: Partial<AttemptRecord>): AttemptRecord => ({ id, phase: 'ceo', voice: 'native', state: 'open', ...over }) as AttemptRecord;
const record = (attempts: AttemptRecord[], current: RunRecord['current'] = 'ceo') => ({ attempts: Object.fromEntries(attempts.map((a) => [a.id, a])), current });

describe('plan run rounds', () => {
  test('should run every open attempt of the current phase, and stop when the same ones come round again', () => {
    const r = record([attempt('a1', {}), attempt('a2', { voice: 'outside' }), attempt('a3', { phase: 'eng' }), attempt('a0', { state: 'bound' })]);
    const round = roundOf(r, '');
    expect('open' in round && round.open.map((a) => a.id)).toEqual(['a1', 'a2']);
    expect(roundOf(r, 'a1,a2')).toEqual({ stop: { reason: 'nothing_to_move', phase: 'ceo' } });
  });

  test('should stop on a failed native voice with the attempt to redispatch as argv, worded at the edge as before', () => {
    const stop = stopOf(record([attempt('r-a1', { state: 'failed', code: 'CHILD_FAILED' }), attempt('r-a2', { voice: 'outside', state: 'bound' })]));
    expect(stop).toEqual({ reason: 'native_failed', phase: 'ceo', attempt: 'r-a1', state: 'failed', code: 'CHILD_FAILED' });
    expect(stopFixArgv(stop)).toEqual(['plan', 'next', '--redispatch', 'r-a1']);
    expect(stopSummary(stop)).toBe('phase ceo native voice failed (CHILD_FAILED)');
    expect(stopWords(stop)).toBe('phase ceo native voice failed (CHILD_FAILED); run plan next --redispatch r-a1, then plan run again');
    const none = stopOf(record([], null));
    expect([stopFixArgv(none), stopWords(none)]).toEqual([null, 'phase - has no attempt plan run can move']);
  });

  test('should start the run with its plan and spend cap on its first next only', () => {
    expect(startOptions({ plan: 'p.md', spendCap: 5 }, true)).toEqual({ plan: 'p.md', spendCap: 5 });
    expect(startOptions({ plan: 'p.md', spendCap: 5 }, false)).toEqual({});
    expect(startOptions({}, true)).toEqual({});
  });
});

describe('plan run verdicts', () => {
  const outcome = (over: Partial<Outcome>): Outcome => ({ status: 'failed', code: 'CHILD_FAILED', providerStarted: true, ...over }) as Outcome;

  test.each<[string, Partial<Outcome>, ReturnType<typeof outcomeVerdict>]>([
    ['a call that did its work', { status: 'ok', code: null }, { verdict: 'bind' }],
    ['a cancel before the provider started', { status: 'cancelled', code: 'CANCELLED', providerStarted: false }, { verdict: 'open' }],
    ['a cancel after it started', { status: 'cancelled', code: 'CANCELLED' }, { verdict: 'cancelled' }],
    ['a provider that failed', {}, { verdict: 'fail', status: 'failed', code: 'CHILD_FAILED' }],
    ['a provider that never started', { code: 'SPAWN_FAILED', providerStarted: false }, { verdict: 'fail', status: 'unavailable', code: 'SPAWN_FAILED' }],
    ['an end with no code', { code: null }, { verdict: 'fail', status: 'failed', code: 'INTERNAL' }],
  ])('should settle %s', (_name, over, verdict) => {
    expect(outcomeVerdict(outcome(over))).toEqual(verdict);
  });

  const end = (how: OrphanEnd['how'], code: string | null, cleanup = true): OrphanEnd => ({ how, code, cleanup_confirmed: cleanup, at: '2026-12-01T00:00:00.000Z' });
  test.each<[string, OrphanFindings, ReturnType<typeof orphanVerdict>]>([
    ['one that never spawned', { end: undefined, childJournaled: false, found: false, told: null }, { verdict: 'dispatch' }],
    ['one that left its result', { end: end('gone', null), childJournaled: true, found: true, told: null }, { verdict: 'bind' }],
    ['one whose stream ended in an error', { end: end('gone', null), childJournaled: true, found: false, told: 'CHILD_FAILED' }, { verdict: 'stream_failed', code: 'CHILD_FAILED' }],
    ['one torn down and proven gone', { end: end('torn_down', 'CANCELLED'), childJournaled: true, found: false, told: null }, { verdict: 'mint' }],
    ['an adoption the crew cancelled', { end: end('adopted', 'CANCELLED'), childJournaled: true, found: false, told: null }, { verdict: 'mint' }],
    ['one torn down, not proven gone', { end: end('torn_down', 'CANCELLED', false), childJournaled: true, found: false, told: null }, { verdict: 'teardown_unproven' }],
    ['an adoption that ended with a code', { end: end('adopted', 'LEASE_EXPIRED'), childJournaled: true, found: false, told: null }, { verdict: 'adopted_failed', code: 'LEASE_EXPIRED' }],
    ['one that ran and left nothing', { end: end('gone', null), childJournaled: true, found: false, told: null }, { verdict: 'unknown' }],
  ])('should resume %s', (_name, findings, verdict) => {
    expect(orphanVerdict(findings)).toEqual(verdict);
  });
});
