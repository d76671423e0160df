import { describe, expect, test } from 'vitest';
import { isLanewardError, LanewardError } from '../formats/codes/error.ts';
import { modelFamily } from '../formats/review/model-family.ts';
import type { ReviewFinding } from '../formats/review/finding.ts';
import type { JournalEvent, PhaseId, RunRecord, VoiceId } from '../formats/review/run-record.ts';
import type { CheckVerdictInput } from '../main/plan/core/carry-check.ts';
import { claim, unclaim } from '../main/plan/core/driver.ts';
import { numberedFindings } from '../main/plan/core/findings.ts';
import { transition, type Command } from '../main/plan/core/machine.ts';
import { emptyReport, type PlanReport } from '../main/plan/core/report.ts';
import { factLine } from '../main/cli/plan-lines.ts';
import type { StartInput } from '../main/plan/core/start.ts';

// The review-run machine, driven as data: no store, no files, no process. Each step runs on
// a clone of the record (as the store hands the machine a private copy); a refusal leaves
// the harness's record as it was.

const SNAP_A = 'a'.repeat(64);
const SNAP_B = 'b'.repeat(64);
const doc = (snapshot: string) => ({ implementation: `## Implementation plan\n\n- ${snapshot.slice(0, 4)}\n`, snapshot, items: [`- ${snapshot.slice(0, 4)}`] });
const PLAN = { path: '/plans/plan.md', sha256: 'f'.repeat(64), doc: doc(SNAP_A) };
const REVISED = { path: '/plans/plan.md', sha256: 'e'.repeat(64), doc: doc(SNAP_B) };

const low = (title: string): ReviewFinding => ({ ref: null, severity: 'Low', title });
const high = (title: string): ReviewFinding => ({ ref: null, severity: 'High', title, fix: `fix ${title}` });

interface Done {
  readonly events: JournalEvent[];
  readonly report: PlanReport;
  readonly changed: boolean;
  readonly history: readonly unknown[];
}

class Run {
  record: RunRecord | undefined;
  readonly findings = new Map<string, readonly ReviewFinding[]>();
  clock = 0;

  constructor(input: Partial<StartInput> = {}) {
    this.apply({ type: 'start', input: { run: 'plan-20261201-abcdef', plan: PLAN, scope: { ui: false, dx: false, source: 'ui:detected,dx:detected' }, sessionKind: 'interactive', ...input } });
  }

  get run(): RunRecord {
    return this.record!;
  }

  /** One command on a clone of the record; the clone is kept only when the machine says it changed. */
  apply(command: Command, fresh?: { attempt: string; findings: readonly ReviewFinding[] }): Done {
    const events: JournalEvent[] = [];
    const report = emptyReport('/runs/r', this.record?.run ?? null);
    const now = new Date(Date.UTC(2026, 11, 1, 0, 0, this.clock++)).toISOString();
    const findingsOf = (id: string) => (id === fresh?.attempt ? fresh.findings : this.findings.get(id) ?? []);
    const done = transition(structuredClone(this.record), command, { now, events, report, findingsOf });
    if (done.changed) {
      this.record = done.record;
      if (fresh !== undefined) this.findings.set(fresh.attempt, fresh.findings);
    }
    return { events, report, changed: done.changed, history: done.history };
  }

  /** The code a command is refused with; the record is left as it was. */
  refused(command: Command): string {
    const before = structuredClone(this.record);
    try {
      this.apply(command);
    } catch (error) {
      expect(this.record).toEqual(before);
      if (isLanewardError(error)) return error.code;
      throw error;
    }
    throw new Error(`${command.type} was not refused`);
  }

  open(phase: PhaseId, voice: VoiceId): string {
    return this.run.phases[phase]![voice].attempt!;
  }

  bind(phase: PhaseId, voice: VoiceId, findings: readonly ReviewFinding[] = [], extra: { model?: string; digest?: string; attempt?: string } = {}): Done {
    const attempt = extra.attempt ?? this.open(phase, voice);
    const model = extra.model ?? (voice === 'native' ? 'claude-test' : 'gpt-test');
    return this.apply(
      { type: 'submit', input: { attempt, phase, voice, snapshot: this.run.phases[phase]!.snapshot!, kind: 'result', digest: extra.digest ?? `${attempt}-digest`, findings, receipt: 'input', model, family: modelFamily(model), runner: 'test', attest: null } },
      { attempt, findings },
    );
  }

  next(input: { redispatch?: string; planFileSha?: string | null } = {}): Done {
    return this.apply({ type: 'next', input: { planFileSha: PLAN.sha256, ...input } });
  }

  /** Both voices of every phase bound up to the gate: `findings` in the first phase bound, none after. */
  toGate(findings: { native?: readonly ReviewFinding[]; outside?: readonly ReviewFinding[] } = {}): Done {
    let last: Done | undefined;
    let first = true;
    if (this.run.current === null) this.next();
    while (this.run.state !== 'gate_pending' && this.run.state !== 'reviewed' && this.run.state !== 'complete') {
      const phase = this.run.current!;
      this.bind(phase, 'native', first ? findings.native ?? [] : []);
      this.bind(phase, 'outside', first ? findings.outside ?? [] : []);
      first = false;
      last = this.next();
    }
    return last!;
  }

  answer(reply: string, extra: { gateRev?: number; by?: string; ownerReply?: string; wordsBy?: string; recHash?: string } = {}): Done {
    return this.apply({ type: 'answer', input: { gateRev: extra.gateRev ?? this.run.gate!.rev, reply, ...withoutGateRev(extra) } });
  }
}

function withoutGateRev<T extends { gateRev?: number }>(extra: T): Omit<T, 'gateRev'> {
  const { gateRev: _gateRev, ...rest } = extra;
  return rest;
}

const types = (events: readonly JournalEvent[]) => events.map((e) => e.type);

describe('a run starts', () => {
  test('should open the first phase with both attempts minted and journal each step', () => {
    const r = new Run();
    expect(r.run.order).toEqual(['ceo', 'eng']);
    expect(r.run.state).toBe('awaiting_result');
    expect(r.run.current).toBe('ceo');
    expect(Object.keys(r.run.attempts)).toEqual(['plan-20261201-abcdef-a1', 'plan-20261201-abcdef-a2']);
    expect(r.run.attempts['plan-20261201-abcdef-a1']).toMatchObject({ phase: 'ceo', voice: 'native', state: 'open', prompt: 'ceo-native-prompt.md', result: 'ceo-native.a1.md', minted_by: 1 });
  });

  test('should order phases by scope: design for ui, dx for a developer tool, ceo alone for --ceo-only', () => {
    expect(new Run({ scope: { ui: true, dx: true, source: 'ui:flag,dx:flag' } }).run.order).toEqual(['ceo', 'design', 'dx', 'eng']);
    expect(new Run({ ceoOnly: true }).run.order).toEqual(['ceo']);
  });

  test('should journal run_started, phase_opened and two attempt_minted', () => {
    const r = new Run();
    r.record = undefined;
    const done = r.apply({ type: 'start', input: { run: 'x-20261201-000000', plan: PLAN, scope: { ui: false, dx: false, source: 's' }, sessionKind: 'unattended' } });
    expect(types(done.events)).toEqual(['run_started', 'phase_opened', 'attempt_minted', 'attempt_minted']);
    expect(r.run.session_kind).toBe('unattended');
  });

  test('should refuse a phase the cap cannot fund (SPEND_CAP_EXCEEDED) and create nothing', () => {
    const r = new Run();
    r.record = undefined;
    expect(r.refused({ type: 'start', input: { run: 'x-20261201-000000', plan: PLAN, scope: { ui: false, dx: false, source: 's' }, sessionKind: 'interactive', spendCap: 3 } })).toBe('SPEND_CAP_EXCEEDED');
    expect(r.record).toBeUndefined();
  });

  test('should let a second first next that lost the race move the run as a next does', () => {
    const r = new Run();
    const done = r.apply({ type: 'start', input: { run: r.run.run, plan: PLAN, scope: { ui: false, dx: false, source: 's' }, sessionKind: 'interactive' } });
    expect(done.changed).toBe(false);
    expect(r.run.commands).toBe(1);
  });

  test('should refuse --ceo-only on a full run (CEO_ONLY_AFTER_INIT)', () => {
    expect(new Run().refused({ type: 'next', input: { planFileSha: null, ceoOnly: true } })).toBe('CEO_ONLY_AFTER_INIT');
  });
});

describe('a record the machine cannot move', () => {
  test('should refuse a command on a run that is not there (RUN_NOT_INITIALIZED)', () => {
    const r = new Run();
    r.record = undefined;
    expect(r.refused({ type: 'next', input: { planFileSha: null } })).toBe('RUN_NOT_INITIALIZED');
  });

  test('should refuse to open a phase after one closed without its consensus (CONSENSUS_MISSING)', () => {
    const r = new Run();
    r.bind('ceo', 'native');
    r.bind('ceo', 'outside');
    r.record!.phases.ceo!.consensus = null;
    expect(r.refused({ type: 'next', input: { planFileSha: null } })).toBe('CONSENSUS_MISSING');
  });
});

describe('results bind exactly once', () => {
  test('should bind a result, journal result_bound and report BOUND', () => {
    const r = new Run();
    const a1 = r.open('ceo', 'native');
    const done = r.bind('ceo', 'native', [low('one')]);
    expect(types(done.events)).toEqual(['result_bound']);
    expect(done.report.bound).toEqual([{ attempt: a1, phase: 'ceo', voice: 'native', model: 'claude-test', findings: 1, sha256: `${a1}-digest`, again: false }]);
    expect(r.run.attempts[a1]!.state).toBe('bound');
    expect(r.run.phases.ceo!.native).toEqual({ status: 'completed', attempt: a1 });
  });

  test('should report the same bytes again without a change, and refuse other bytes (ATTEMPT_MISMATCH)', () => {
    const r = new Run();
    const a1 = r.open('ceo', 'native');
    r.bind('ceo', 'native');
    const again = r.bind('ceo', 'native', [], { attempt: a1 });
    expect(again.changed).toBe(false);
    expect(again.report.bound[0]!.again).toBe(true);
    expect(r.refused({ type: 'submit', input: { attempt: a1, phase: 'ceo', voice: 'native', snapshot: SNAP_A, kind: 'result', digest: 'other', findings: [], receipt: 'input', model: 'm', family: null, runner: 't', attest: null } })).toBe('ATTEMPT_MISMATCH');
  });

  test.each([
    ['an unknown attempt', { attempt: 'nope' }, 'ATTEMPT_MISMATCH'],
    ['another voice', { voice: 'outside' as const }, 'ATTEMPT_MISMATCH'],
    ['another phase', { phase: 'eng' as const }, 'ATTEMPT_MISMATCH'],
    ['a result read against another snapshot', { snapshot: SNAP_B }, 'PHASE_NOT_AWAITING'],
    ['__proto__ as the attempt', { attempt: '__proto__' }, 'ATTEMPT_MISMATCH'],
  ])('should refuse %s', (_name, change, code) => {
    const r = new Run();
    const base = { attempt: r.open('ceo', 'native'), phase: 'ceo' as PhaseId, voice: 'native' as VoiceId, snapshot: SNAP_A, kind: 'result' as const, digest: 'd', findings: [], receipt: 'input' as const, model: 'm', family: null, runner: 't', attest: null };
    expect(r.refused({ type: 'submit', input: { ...base, ...change } })).toBe(code);
  });

  test('should refuse a result that did not parse with its own code, once the attempt checks pass', () => {
    const r = new Run();
    const attempt = r.open('ceo', 'native');
    const input = { attempt, phase: 'ceo' as PhaseId, voice: 'native' as VoiceId, snapshot: SNAP_A, kind: 'result' as const, digest: 'd', findings: [], receipt: 'input' as const, model: 'm', family: null, runner: 't', attest: null };
    expect(r.refused({ type: 'submit', input: { ...input, invalid: new LanewardError('RESULT_FINDINGS_MISSING', 'no fence') } })).toBe('RESULT_FINDINGS_MISSING');
    // The attempt checks come first: a stale attempt is refused as such whatever the bytes.
    expect(r.refused({ type: 'submit', input: { ...input, attempt: 'nope', invalid: new LanewardError('RESULT_FINDINGS_MISSING', 'no fence') } })).toBe('ATTEMPT_MISMATCH');
  });

  test('should refuse two voices of one family (MODEL_FAMILY_CONFLICT) and note an unknown family as a deviation', () => {
    const r = new Run();
    r.bind('ceo', 'native', [], { model: 'claude-opus-4' });
    expect(() => r.bind('ceo', 'outside', [], { model: 'claude-sonnet-4' })).toThrowError(/both/);
    r.bind('ceo', 'outside', [], { model: 'mystery-model-9' });
    expect(r.run.deviations).toEqual(['model family unknown for mystery-model-9 (ceo outside)']);
  });

  test('should close the phase with its consensus once both voices bound, and report PHASE_CLOSED', () => {
    const r = new Run();
    r.bind('ceo', 'native', [low('shared title here')]);
    const done = r.bind('ceo', 'outside', [low('shared title here'), low('only outside saw this')]);
    expect(types(done.events)).toEqual(['result_bound', 'phase_closed']);
    expect(done.report.closed).toEqual([{ phase: 'ceo', confirmed: 1, unverified: 0, disagree: 0, new: 1, native_only: 0, coverage: 'both' }]);
    expect(r.run.state).toBe('phase_closed');
    expect(r.run.phases.ceo!.consensus!.entries.length).toBe(2);
  });

  test('should close the outside voice as unavailable (reservation back) or failed (unknown spend)', () => {
    const r = new Run({ spendCap: 100, estimateUsd: 2 });
    const outside = r.open('ceo', 'outside');
    const done = r.apply({ type: 'submit', input: { attempt: outside, phase: 'ceo', voice: 'outside', snapshot: SNAP_A, kind: 'unavailable', why: 'no key' } });
    expect(done.report.after.map(factLine)).toEqual([`VOICE: ${outside} phase=ceo voice=outside status=unavailable`]);
    expect(r.run.spend).toMatchObject({ reserved: 2, unknown_n: 0 });
    r.bind('ceo', 'native');
    expect(r.run.phases.ceo!.consensus!.coverage).toBe('native_only');
    const s = new Run({ spendCap: 100, estimateUsd: 2 });
    s.apply({ type: 'submit', input: { attempt: s.open('ceo', 'outside'), phase: 'ceo', voice: 'outside', snapshot: SNAP_A, kind: 'failed', why: 'crashed' } });
    expect(s.run.spend).toMatchObject({ reserved: 2, unknown_n: 1, unknown_usd: 2 });
  });

  test('should settle a voice that failed or was cancelled after its stream gave its cost at that cost, its reservation released', () => {
    const r = new Run({ spendCap: 100, estimateUsd: 2 });
    r.apply({ type: 'fail', input: { attempt: r.open('ceo', 'outside'), status: 'failed', code: 'LEASE_EXPIRED', detail: 'no mark for 30 s', usageUsd: 0.0015 } });
    expect(r.run.spend).toMatchObject({ spent: 0.0015, reserved: 2, unknown_n: 0, unknown_usd: 0 });
    r.apply({ type: 'cancel', input: { attempt: r.open('ceo', 'native'), why: 'SIGTERM', usageUsd: 0.00375 } });
    expect(r.run.spend).toMatchObject({ reserved: 0, unknown_n: 0, unknown_usd: 0 });
    expect(r.run.spend.spent).toBeCloseTo(0.00525, 12);
  });
});

describe('next moves the run one step', () => {
  test('should change nothing while attempts are out, and report those an earlier command left open', () => {
    const r = new Run();
    const done = r.next();
    expect(done.changed).toBe(false);
    expect(done.report.unknown.map((u) => u.voice)).toEqual(['native', 'outside']);
  });

  test('should open the next phase once one closed, then write the gate after the last', () => {
    const r = new Run();
    r.bind('ceo', 'native');
    r.bind('ceo', 'outside');
    expect(types(r.next().events)).toEqual(['phase_opened', 'attempt_minted', 'attempt_minted']);
    expect(r.run.current).toBe('eng');
    r.bind('eng', 'native');
    r.bind('eng', 'outside');
    const gate = r.next();
    expect(types(gate.events)).toEqual(['gate_written']);
    expect(r.run.state).toBe('gate_pending');
    expect(r.run.gate!.items.map((i) => i.id)).toEqual(['p1']);
    expect(gate.report.after.map(factLine)[0]).toMatch(/^CYCLE: run=plan-20261201-abcdef wall_s=\d+ phases=ceo:\d+s,eng:\d+s$/);
    expect(gate.history.length).toBe(2);
  });

  test('should end a CEO-only run reviewed at its one phase, with no gate', () => {
    const r = new Run({ ceoOnly: true });
    const done = r.toGate({ native: [low('a thing')] });
    expect(r.run.state).toBe('reviewed');
    expect(r.run.gate).toBeNull();
    expect(done.report.after.map(factLine)[0]).toBe('REVIEWED: run=plan-20261201-abcdef phase=ceo confirmed=0 new=0 native_only=1');
  });

  test('should put a severe finding on the gate as an auto item and recommend p1b', () => {
    const r = new Run();
    r.toGate({ native: [high('the cache is never invalidated')] });
    expect(r.run.gate!.items.map((i) => [i.id, i.kind, i.recommended])).toEqual([['d1', 'auto', 'a'], ['p1', 'approval', 'b']]);
  });

  test('should refuse while accepted plan changes wait to be incorporated (PLAN_AMEND_PENDING)', () => {
    const r = new Run();
    r.toGate({ native: [high('the cache is never invalidated')] });
    r.answer('p1b');
    expect(r.run.amendments.length).toBe(1);
    expect(r.refused({ type: 'next', input: { planFileSha: PLAN.sha256 } })).toBe('PLAN_AMEND_PENDING');
  });

  test('should redispatch an open attempt: abandoned (its reservation stays as unknown spend) and a fresh one minted', () => {
    const r = new Run({ spendCap: 100, estimateUsd: 2 });
    const old = r.open('ceo', 'native');
    const done = r.next({ redispatch: old });
    expect(types(done.events)).toEqual(['attempt_abandoned', 'attempt_minted']);
    expect(r.run.attempts[old]!.state).toBe('abandoned');
    expect(r.open('ceo', 'native')).not.toBe(old);
    expect(r.run.spend).toMatchObject({ reserved: 4, unknown_n: 1, unknown_usd: 2 });
    expect(r.refused({ type: 'next', input: { planFileSha: null, redispatch: old } })).toBe('PHASE_NOT_AWAITING');
    expect(r.refused({ type: 'next', input: { planFileSha: null, redispatch: 'nope' } })).toBe('ATTEMPT_MISMATCH');
  });

  test('should number findings across attempts of a phase and voice, so a rerun never reuses an id', () => {
    const r = new Run();
    r.bind('ceo', 'native', [low('first one'), low('second one')]);
    r.bind('ceo', 'outside');
    r.next();
    r.bind('eng', 'native');
    r.bind('eng', 'outside');
    r.next();
    r.answer('p1d');
    r.next();
    r.bind('ceo', 'native', [low('third one')]);
    const ids = numberedFindings(r.run, { findingsOf: (id) => r.findings.get(id) ?? [] }).map((f) => f.id);
    expect(ids).toEqual(['plan-20261201-abcdef-ceo-native-1', 'plan-20261201-abcdef-ceo-native-2', 'plan-20261201-abcdef-ceo-native-3']);
  });
});

describe('the gate is answered through the reply grammar', () => {
  test('should complete the run on as-is, recording APPROVED', () => {
    const r = new Run();
    r.toGate();
    const done = r.answer('as-is');
    expect(r.run.state).toBe('complete');
    expect(done.report.approved).toEqual([{ decision: 'plan-20261201-abcdef-p1', key: 'a' }]);
    expect(types(done.events)).toEqual(['decision_recorded', 'gate_settled']);
  });

  test.each([
    ['p1c', 'gate_pending'],
    ['p1e', 'incomplete'],
    ['p1d', 'phase_closed'],
  ])('should settle %s as %s', (reply, state) => {
    const r = new Run();
    r.toGate();
    r.answer(reply);
    expect(r.run.state).toBe(state);
  });

  test('should refuse a stale gate_rev, an unparsed reply and an answer that applies nothing', () => {
    const r = new Run();
    r.toGate();
    expect(r.refused({ type: 'answer', input: { gateRev: 2, reply: 'as-is' } })).toBe('GATE_REV_STALE');
    for (const reply of ['p9z', 'yes', 'd9a', '']) expect(r.refused({ type: 'answer', input: { gateRev: 1, reply } }), reply).toBe('GATE_REPLY_UNPARSED');
    r.answer('p1c');
    // A hold keeps the gate until the plan is revised: neither the same reply nor p1a applies.
    expect(r.refused({ type: 'answer', input: { gateRev: 1, reply: 'p1c' } })).toBe('GATE_REV_STALE');
    expect(r.refused({ type: 'answer', input: { gateRev: 1, reply: 'p1a' } })).toBe('GATE_REV_STALE');
    const done = new Run();
    done.toGate();
    done.answer('as-is');
    expect(done.refused({ type: 'answer', input: { gateRev: 1, reply: 'as-is' } })).toBe('GATE_REV_STALE');
  });

  test('should refuse an answer with no gate (PHASE_NOT_AWAITING) and on a CEO-only run (CEO_ONLY_NO_GATE)', () => {
    expect(new Run().refused({ type: 'answer', input: { gateRev: 1, reply: 'as-is' } })).toBe('PHASE_NOT_AWAITING');
    const c = new Run({ ceoOnly: true });
    c.toGate();
    expect(c.refused({ type: 'answer', input: { gateRev: 1, reply: 'as-is' } })).toBe('CEO_ONLY_NO_GATE');
  });

  test('should ask who answered an unattended run, and the owner\'s words from an agent', () => {
    const r = new Run({ sessionKind: 'unattended' });
    r.toGate();
    expect(r.refused({ type: 'answer', input: { gateRev: 1, reply: 'as-is' } })).toBe('ANSWER_BY_REQUIRED');
    expect(r.refused({ type: 'answer', input: { gateRev: 1, reply: 'as-is', by: 'agent:x' } })).toBe('OWNER_REPLY_REQUIRED');
    expect(r.refused({ type: 'answer', input: { gateRev: 1, reply: 'as-is', by: 'agent:x', ownerReply: 'p1e' } })).toBe('GATE_OWNER_REPLY_MISMATCH');
    r.answer('as-is', { by: 'agent:x', ownerReply: 'as-is' });
    expect(r.run.gate!.answers['p1']).toMatchObject({ by: 'agent:x', role: 'agent', owner_reply: 'as-is', words_by: null });
  });

  test('should take an agent\'s own words with wordsBy and record them as its own', () => {
    const r = new Run();
    r.toGate();
    r.answer('as-is', { by: 'agent:crew', wordsBy: 'agent:crew' });
    expect(r.run.gate!.answers['p1']).toMatchObject({ words_by: 'agent:crew', owner_reply: null });
  });

  test('should keep the plan\'s direction for unanswered auto items unless p1b, and add APPLY for a change', () => {
    const keep = new Run();
    keep.toGate({ native: [high('the cache is never invalidated')] });
    keep.answer('p1a');
    expect(keep.run.gate!.answers['d1']!.chosen).toBe('b');
    expect(keep.run.amendments).toEqual([]);
    const change = new Run();
    change.toGate({ native: [high('the cache is never invalidated')] });
    const done = change.answer('p1b');
    expect(change.run.gate!.answers['d1']!.chosen).toBe('a');
    expect(done.report.applied.map((a) => a.decision)).toEqual(['plan-20261201-abcdef-d1']);
  });
});

describe('an answer that applies nothing', () => {
  test.each([
    ['p1a after a hold', ['p1c'], 'p1a'],
    ['as-is after a hold', ['p1c'], 'as-is'],
    ['rec after a hold', ['p1c'], 'rec'],
    ['a pick already made while the gate waits for p1', ['d1b'], 'd1a'],
    ['the same pick twice while the gate waits for p1', ['d1b'], 'd1b'],
  ])('should refuse %s (GATE_REV_STALE) and change nothing', (_name, before, reply) => {
    const r = new Run();
    r.toGate({ native: [high('Batch writes are not atomic')] });
    for (const earlier of before) r.answer(earlier);
    expect(r.refused({ type: 'answer', input: { gateRev: 1, reply } })).toBe('GATE_REV_STALE');
  });

  test.each([
    ['p1c', 'p1a', 'gate_pending'],
    ['p1a', 'p1c', 'complete'],
    ['as-is', 'p1c', 'complete'],
    ['p1c', 'as-is', 'gate_pending'],
  ])('should apply the first of %s then %s and refuse the second (GATE_REV_STALE)', (first, second, state) => {
    const r = new Run();
    r.toGate();
    r.answer(first);
    expect(r.refused({ type: 'answer', input: { gateRev: 1, reply: second } })).toBe('GATE_REV_STALE');
    expect(r.run.state).toBe(state);
  });
});

describe('recommendations change before the gate is relayed', () => {
  test('should bump rec_rev and the hash, then refuse rec without the new hash (GATE_REC_STALE)', () => {
    const r = new Run();
    r.toGate({ native: [high('the cache is never invalidated')] });
    const before = r.run.gate!.rec_hash;
    const done = r.apply({ type: 'recommend', input: { item: 'd1', option: 'b' } });
    expect(done.report.after.map(factLine)[0]).toMatch(/^RECOMMEND: plan-20261201-abcdef-d1 a -> b rec_rev=2 rec_hash=[0-9a-f]{16}$/);
    expect(r.run.gate!.rec_hash).not.toBe(before);
    expect(r.refused({ type: 'answer', input: { gateRev: 1, reply: 'rec' } })).toBe('GATE_REC_STALE');
    r.answer('rec', { recHash: r.run.gate!.rec_hash });
    expect(r.run.state).toBe('complete');
  });

  test.each([
    ['an unknown item', { item: 'd9', option: 'a' }, 'DECISION_UNKNOWN'],
    ['an unknown option', { item: 'd1', option: 'z' }, 'DECISION_UNKNOWN'],
  ])('should refuse %s', (_name, input, code) => {
    const r = new Run();
    r.toGate({ native: [high('the cache is never invalidated')] });
    expect(r.refused({ type: 'recommend', input })).toBe(code);
  });

  test('should refuse an answered item (GATE_REV_STALE) and a run with no open gate (PHASE_NOT_AWAITING)', () => {
    const r = new Run();
    r.toGate({ native: [high('the cache is never invalidated')] });
    r.answer('d1a');
    expect(r.refused({ type: 'recommend', input: { item: 'd1', option: 'b' } })).toBe('GATE_REV_STALE');
    expect(new Run().refused({ type: 'recommend', input: { item: 'p1', option: 'a' } })).toBe('PHASE_NOT_AWAITING');
  });
});

describe('the plan is revised', () => {
  test('should reopen changed phases plus eng, move the gate to the history and report REVISED', () => {
    const r = new Run();
    r.toGate();
    r.answer('p1c');
    const done = r.apply({ type: 'revise', input: { kind: 'plan', plan: REVISED, incorporates: [] } });
    expect(done.report.after.map(factLine)).toEqual(['REVISED: run=plan-20261201-abcdef plan_rev=2 reopened=ceo,eng incorporated=- pending=0']);
    expect(r.run.gate).toBeNull();
    expect(r.run.past_gates.map((g) => g.rev)).toEqual([1]);
    r.next();
    expect(r.run.current).toBe('ceo');
  });

  test('should refuse an unchanged plan (PLAN_UNCHANGED), an unknown change (DECISION_UNKNOWN) and a finished run (PHASE_NOT_AWAITING)', () => {
    const r = new Run();
    r.toGate();
    expect(r.refused({ type: 'revise', input: { kind: 'plan', plan: PLAN, incorporates: [] } })).toBe('PLAN_UNCHANGED');
    expect(r.refused({ type: 'revise', input: { kind: 'plan', plan: REVISED, incorporates: ['nope'] } })).toBe('DECISION_UNKNOWN');
    expect(r.refused({ type: 'revise', input: { kind: 'settle', decision: 'nope' } })).toBe('DECISION_UNKNOWN');
    r.answer('p1e');
    expect(r.refused({ type: 'revise', input: { kind: 'plan', plan: REVISED, incorporates: [] } })).toBe('PHASE_NOT_AWAITING');
    const c = new Run({ ceoOnly: true });
    expect(c.refused({ type: 'revise', input: { kind: 'plan', plan: REVISED, incorporates: [] } })).toBe('CEO_ONLY_NO_GATE');
  });

  test('should discharge an accepted change by incorporating, settling or withdrawing it', () => {
    const r = new Run();
    r.toGate({ native: [high('the cache is never invalidated')] });
    r.answer('p1b');
    const decision = r.run.amendments[0]!.decision;
    const settled = r.apply({ type: 'revise', input: { kind: 'settle', decision } });
    expect(settled.report.after.map(factLine)).toEqual([`SETTLED: ${decision} pending=0`]);
    expect(types(settled.events)).toEqual(['amendment_settled']);
  });

  test('should send the next gate to the owner when the one before was held', () => {
    const r = new Run();
    r.toGate();
    r.answer('p1c');
    r.apply({ type: 'revise', input: { kind: 'plan', plan: REVISED, incorporates: [] } });
    const done = r.toGate();
    // The gate before was held (p1c): nothing to carry from, so it goes to the owner.
    expect(done.report.carry.map(factLine)[0]).toMatch(/^CARRY: no \(gate_rev 1 was not approved \(p1c\)\)$/);
    expect(r.run.state).toBe('gate_pending');
  });

  test('should carry an approved gate forward after a revise, and refuse when the plan file changed since', () => {
    const approve = () => {
      const r = new Run();
      r.toGate();
      r.answer('as-is');
      r.apply({ type: 'revise', input: { kind: 'plan', plan: REVISED, incorporates: [] } });
      r.next();
      r.bind('ceo', 'native');
      r.bind('ceo', 'outside');
      r.next();
      r.bind('eng', 'native');
      r.bind('eng', 'outside');
      return r;
    };
    const carried = approve();
    const done = carried.next({ planFileSha: REVISED.sha256 });
    expect(done.report.carry.map(factLine)[0]).toMatch(/^CARRIED: gate_rev=2 <- gate_rev=1 words="as-is" by=unrecorded/);
    expect(carried.run.state).toBe('complete');
    const changed = approve();
    expect(changed.next({ planFileSha: 'c'.repeat(64) }).report.carry.map(factLine)).toEqual(['CARRY: no (the plan file changed after the revise that took the changes)']);
    expect(changed.run.state).toBe('gate_pending');
  });
});

describe('a carry check reads a change made past the round cap', () => {
  const capped = (spend: Partial<StartInput> = {}) => {
    const r = new Run({ roundCap: 1, ...spend });
    r.toGate();
    r.answer('as-is');
    const revised = r.apply({ type: 'revise', input: { kind: 'plan', plan: REVISED, incorporates: [] } });
    expect(revised.report.after.map(factLine)[0]).toContain('reopened=- capped=yes');
    const gate = r.next({ planFileSha: REVISED.sha256 });
    return { r, gate };
  };

  test('should put the unreviewed change on the gate and start a check by another family', () => {
    const { r, gate } = capped();
    expect(r.run.gate!.delta_item).toBe('d1');
    expect(gate.report.carry.map(factLine)[0]).toMatch(/^CARRY_CHECK: plan-20261201-abcdef-a\d+ prompt=carry-check\.r2-prompt\.md result=carry-check\.r2\.a\d+\.md model_family=differs from /);
    expect(r.run.gate!.check!.state).toBe('open');
  });

  const verdict = (r: Run, input: Partial<Extract<CheckVerdictInput, { kind: 'result' }>>): CheckVerdictInput => ({
    kind: 'result', attempt: r.run.gate!.check!.attempt, snapshot: r.run.snapshot, model: 'gemini-2', family: modelFamily('gemini-2'), findings: [], digest: 'd'.repeat(64), ...input,
  });

  test('should carry the gate on a clean check and leave it to the owner on a severe finding or an unavailable reviewer', () => {
    const pass = capped().r;
    pass.apply({ type: 'check', input: verdict(pass, {}) });
    expect(pass.run.state).toBe('complete');
    expect(pass.run.gate!.check!.state).toBe('pass');
    const fail = capped().r;
    const failed = fail.apply({ type: 'check', input: verdict(fail, { findings: [high('breaks the build')] }) });
    expect(failed.report.carry.map(factLine)).toEqual([expect.stringMatching(/verdict=fail findings=1 severe=1/), 'CARRY: no (the carry check found 1 High or Critical finding(s))']);
    expect(fail.run.state).toBe('gate_pending');
    const gone = capped().r;
    gone.apply({ type: 'check', input: { kind: 'unavailable', attempt: gone.run.gate!.check!.attempt, snapshot: gone.run.snapshot, why: 'no reviewer' } });
    expect(gone.run.gate!.check!.state).toBe('unavailable');
  });

  test('should refuse another attempt (ATTEMPT_MISMATCH), a plan reviewer\'s family (MODEL_FAMILY_CONFLICT) and a check no longer open (PHASE_NOT_AWAITING)', () => {
    const { r } = capped();
    expect(r.refused({ type: 'check', input: verdict(r, { attempt: 'nope' }) })).toBe('ATTEMPT_MISMATCH');
    expect(r.refused({ type: 'check', input: verdict(r, { model: 'claude-x', family: modelFamily('claude-x') }) })).toBe('MODEL_FAMILY_CONFLICT');
    r.apply({ type: 'check', input: verdict(r, { model: 'claude-x', family: modelFamily('claude-x'), sameFamily: 'no other' }) });
    expect(r.refused({ type: 'check', input: verdict(r, {}) })).toBe('PHASE_NOT_AWAITING');
  });

  test('should refuse to start a check over --carry-check-cap and leave the gate to the owner', () => {
    const { r, gate } = capped({ spendCap: 100, estimateUsd: 6 });
    expect(gate.report.carry.map(factLine)).toEqual(['CARRY: no (the carry check would reserve 6.00, over --carry-check-cap 5.00)']);
    expect(r.run.gate!.check).toBeUndefined();
  });
});

describe('attempts are dispatched, supervised, released and failed', () => {
  test('should mark a dispatch once and refuse a second driver (ATTEMPT_IN_FLIGHT)', () => {
    const r = new Run();
    const a = r.open('ceo', 'native');
    const done = r.apply({ type: 'dispatch', input: { attempt: a, by: { pid: 42, ticks: '7' } } });
    expect(types(done.events)).toEqual(['attempt_dispatched']);
    expect(r.run.attempts[a]!.child).toBeNull();
    expect(r.refused({ type: 'dispatch', input: { attempt: a, by: { pid: 43, ticks: '8' } } })).toBe('ATTEMPT_IN_FLIGHT');
  });

  test('should take a dispatch back when the supervision was cancelled before the provider started', () => {
    const r = new Run();
    const a = r.open('ceo', 'native');
    r.apply({ type: 'dispatch', input: { attempt: a, by: { pid: 42, ticks: '7' } } });
    r.apply({ type: 'outcome', input: { attempt: a, facts: { status: 'failed', code: 'CANCELLED', child_exit: null, provider_started: false, marks: 0, duration_ms: 1, cleanup_confirmed: true } } });
    expect(r.run.attempts[a]!.dispatched_at).toBeUndefined();
    r.apply({ type: 'dispatch', input: { attempt: a, by: { pid: 44, ticks: '9' } } });
    r.apply({ type: 'child', input: { attempt: a, child: { pid: 50, pgid: 50, ticks: '10', mode: 'lease', deadline_at: null } as never } });
    expect(r.refused({ type: 'undispatch', input: { attempt: a } })).toBe('ATTEMPT_MISMATCH');
  });

  test('should fail a voice as a typed failure and close the phase native-only when the outside voice failed', () => {
    const r = new Run();
    const outside = r.open('ceo', 'outside');
    const failed = r.apply({ type: 'fail', input: { attempt: outside, status: 'failed', code: 'LEASE_EXPIRED', detail: 'no mark for 30 s' } });
    expect(failed.report.after.map(factLine)).toEqual([`VOICE: ${outside} phase=ceo voice=outside status=failed code=LEASE_EXPIRED`]);
    expect(r.run.attempts[outside]).toMatchObject({ state: 'failed', code: 'LEASE_EXPIRED', why: 'LEASE_EXPIRED: no mark for 30 s' });
    const closed = r.bind('ceo', 'native');
    expect(closed.report.closed[0]!.coverage).toBe('native_only');
    expect(r.refused({ type: 'fail', input: { attempt: outside, status: 'failed', code: 'X', detail: 'y' } })).toBe('ATTEMPT_MISMATCH');
  });

  test('should redispatch a failed native voice only by the parent\'s choice', () => {
    const r = new Run();
    const native = r.open('ceo', 'native');
    r.apply({ type: 'fail', input: { attempt: native, status: 'unavailable', code: 'SPAWN_FAILED', detail: 'no binary' } });
    expect(r.next().changed).toBe(false);
    r.next({ redispatch: native });
    expect(r.open('ceo', 'native')).not.toBe(native);
  });

  test('should cancel a voice its own driver gave up: abandoned, the voice waiting again for a fresh attempt', () => {
    const r = new Run();
    const a = r.open('ceo', 'native');
    r.apply({ type: 'cancel', input: { attempt: a, why: 'interrupted' } });
    expect(r.run.phases.ceo!.native).toEqual({ status: 'pending', attempt: null });
    const next = r.next();
    expect(types(next.events)).toEqual(['attempt_minted']);
  });

  test('should release an open attempt (RELEASED, reservation back) and refuse releasing it twice', () => {
    const r = new Run({ spendCap: 100, estimateUsd: 2 });
    const a = r.open('ceo', 'outside');
    expect(r.apply({ type: 'release', input: { attempt: a } }).report.after.map(factLine)).toEqual([`RELEASED: ${a} phase=ceo voice=outside freed=2.00`]);
    expect(r.run.spend.reserved).toBe(2);
    expect(r.refused({ type: 'release', input: { attempt: a } })).toBe('ATTEMPT_MISMATCH');
  });

  test('should let one driver claim a run while another lives, and take over a dead one\'s claim', () => {
    const r = new Run();
    const mine = { pid: 1, ticks: '1', token: 'a', since: 'now' };
    const theirs = { pid: 2, ticks: '2', token: 'b', since: 'now' };
    expect(claim(r.run, { mine, alive: () => true })).toBeUndefined();
    expect(claim(r.run, { mine: theirs, alive: () => true })).toEqual(mine);
    expect(claim(r.run, { mine: theirs, alive: () => false })).toBeUndefined();
    expect(unclaim(r.run, { token: 'a' })).toBe(false);
    expect(unclaim(r.run, { token: 'b' })).toBe(true);
    expect(r.run.driver).toBeUndefined();
  });
});

describe('exports are journaled', () => {
  test('should refuse an export before the gate (EXPORT_NOT_READY) and with changes pending (PLAN_AMEND_PENDING)', () => {
    const r = new Run();
    expect(r.refused({ type: 'export', input: { state: 'started' } })).toBe('EXPORT_NOT_READY');
    r.toGate({ native: [high('the cache is never invalidated')] });
    r.answer('p1b');
    expect(r.refused({ type: 'export', input: { state: 'started' } })).toBe('PLAN_AMEND_PENDING');
  });

  test('should drop a started export once the run moved on, and finish one that still stands', () => {
    const r = new Run();
    r.toGate();
    r.apply({ type: 'export', input: { state: 'started' } });
    expect(r.apply({ type: 'drop-export', input: { by: 'resume' } }).changed).toBe(false);
    expect(types(r.apply({ type: 'finish-export', input: { by: 'resume' } }).events)).toEqual(['export_done']);
    r.apply({ type: 'export', input: { state: 'started' } });
    r.answer('p1d');
    expect(types(r.apply({ type: 'drop-export', input: { by: 'resume' } }).events)).toEqual(['export_dropped']);
    expect(r.run.export).toBeNull();
  });
});
