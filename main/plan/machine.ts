import { buildConsensus, type Consensus } from '../../formats/consensus.ts';
import { LanewardError } from '../../formats/error.ts';
import { draftGate, type RunFinding } from '../../formats/review-gate.ts';
import type { ReviewFinding } from '../../formats/review-result.ts';
import type { AttemptRecord, GateRecord, JournalEvent, PhaseId, PhaseRecord, RunRecord, VoiceId } from '../../formats/review-run.ts';
import { VOICES } from '../../formats/review-run.ts';
import { admit } from './spend.ts';

/**
 * The review run's transitions. Each takes the run record (a private copy inside the
 * store's write transaction), changes it and appends the journal events that describe
 * the change. None does I/O: files follow the committed record afterwards.
 */
export interface Step {
  readonly now: string;
  readonly events: JournalEvent[];
  /** Reads a bound attempt's findings (inside the same transaction). */
  readonly findingsOf: (attempt: string) => readonly ReviewFinding[];
}

export function emptyPhase(id: PhaseId): PhaseRecord {
  return {
    id,
    state: 'waiting',
    snapshot: null,
    native: { status: 'pending', attempt: null },
    outside: { status: 'pending', attempt: null },
    opened_at: null,
    closed_at: null,
    consensus: null,
  };
}

export function phaseOf(run: RunRecord, id: PhaseId): PhaseRecord {
  const phase = run.phases[id];
  if (phase === undefined) throw new LanewardError('PHASE_NOT_AWAITING', `phase ${id} is not in this run (order ${run.order.join(',')})`);
  return phase;
}

/** Opens a phase: checks its predecessors' consensus, then mints both attempts under the cap. */
export function openPhase(run: RunRecord, id: PhaseId, step: Step): void {
  for (const earlier of run.order.slice(0, run.order.indexOf(id))) {
    const closed = run.phases[earlier];
    if (closed?.state === 'closed' && closed.consensus === null) {
      throw new LanewardError('CONSENSUS_MISSING', `phase ${earlier} closed without a consensus record; ${id} cannot open`);
    }
  }
  const phase = phaseOf(run, id);
  const each = admit(run.spend, 2);
  phase.state = 'open';
  phase.snapshot = run.snapshot;
  phase.opened_at = step.now;
  phase.closed_at = null;
  phase.consensus = null;
  run.current = id;
  run.state = 'awaiting_result';
  step.events.push({ type: 'phase_opened', at: step.now, phase: id, snapshot: run.snapshot });
  for (const voice of VOICES) mintAttempt(run, phase, voice, each, step);
}

/** A fresh attempt for one voice; `reserve` was already admitted. */
export function mintAttempt(run: RunRecord, phase: PhaseRecord, voice: VoiceId, reserve: number, step: Step): AttemptRecord {
  const n = run.next_attempt++;
  const id = `${run.run}-a${n}`;
  const attempt: AttemptRecord = {
    id,
    phase: phase.id,
    voice,
    state: 'open',
    prompt: `${phase.id}-${voice}-prompt.md`,
    result: `${phase.id}-${voice}.a${n}.md`,
    minted_at: step.now,
    reserve_usd: reserve,
    minted_by: run.commands,
  };
  run.attempts[id] = attempt;
  phase[voice] = { status: 'running', attempt: id };
  step.events.push({ type: 'attempt_minted', at: step.now, attempt: id, phase: phase.id, voice, reserve_usd: reserve });
  return attempt;
}

/** Closes the phase once both voices are terminal; returns its consensus when it closed. */
export function closeIfDone(run: RunRecord, phase: PhaseRecord, step: Step): Consensus | null {
  if (phase.state !== 'open') return null;
  if (phase.native.status !== 'completed') return null;
  if (phase.outside.status === 'running' || phase.outside.status === 'pending') return null;
  const native = phaseFindings(run, phase, 'native', step);
  const outside = phase.outside.status === 'completed' ? phaseFindings(run, phase, 'outside', step) : null;
  const consensus = buildConsensus(phase.id, native, outside);
  phase.consensus = consensus;
  phase.state = 'closed';
  phase.closed_at = step.now;
  run.state = 'phase_closed';
  step.events.push({
    type: 'phase_closed',
    at: step.now,
    phase: phase.id,
    coverage: consensus.coverage,
    confirmed: consensus.confirmed,
    unverified: consensus.unverified,
    disagree: consensus.disagree,
    new: consensus.new,
    native_only: consensus.native_only,
  });
  return consensus;
}

/**
 * The run-bound findings of one voice's bound attempt: `<run>-<phase>-<voice>-<n>`,
 * numbered across every attempt of that phase and voice so reruns never reuse an id.
 */
export function phaseFindings(run: RunRecord, phase: PhaseRecord, voice: VoiceId, step: Pick<Step, 'findingsOf'>): RunFinding[] {
  const current = phase[voice].attempt;
  let n = 0;
  for (const attempt of boundAttempts(run, phase.id, voice)) {
    const rows = step.findingsOf(attempt.id);
    if (attempt.id === current) return rows.map((row) => ({ ...row, id: `${run.run}-${phase.id}-${voice}-${++n}`, phase: phase.id, voice }));
    n += rows.length;
  }
  return [];
}

/** Every finding the run bound, in attempt order, with its run-bound id. */
export function allFindings(run: RunRecord, step: Pick<Step, 'findingsOf'>): (RunFinding & { attempt: string })[] {
  const out: (RunFinding & { attempt: string })[] = [];
  const counters = new Map<string, number>();
  for (const attempt of Object.values(run.attempts).sort(byMint)) {
    if (attempt.state !== 'bound') continue;
    const key = `${attempt.phase}-${attempt.voice}`;
    let n = counters.get(key) ?? 0;
    for (const row of step.findingsOf(attempt.id)) {
      out.push({ ...row, id: `${run.run}-${key}-${++n}`, phase: attempt.phase, voice: attempt.voice, attempt: attempt.id });
    }
    counters.set(key, n);
  }
  return out;
}

export function boundAttempts(run: RunRecord, phase: PhaseId, voice: VoiceId): AttemptRecord[] {
  return Object.values(run.attempts)
    .filter((a) => a.phase === phase && a.voice === voice && a.state === 'bound')
    .sort(byMint);
}

export function byMint(a: AttemptRecord, b: AttemptRecord): number {
  return Number(a.id.slice(a.id.lastIndexOf('-a') + 2)) - Number(b.id.slice(b.id.lastIndexOf('-a') + 2));
}

/** The first phase in the run's order that has not closed, or null when all have. */
export function nextPhase(run: RunRecord): PhaseId | null {
  return run.order.find((id) => run.phases[id]?.state !== 'closed') ?? null;
}

/** Writes the gate of this round from every closed phase's consensus and findings. */
export function writeGate(run: RunRecord, step: Step, recHash: (items: unknown) => string): void {
  const phases = run.order.map((id) => {
    const phase = phaseOf(run, id);
    if (phase.consensus === null) throw new LanewardError('CONSENSUS_MISSING', `phase ${id} has no consensus; the gate cannot be written`);
    const findings = [
      ...phaseFindings(run, phase, 'native', step),
      ...(phase.outside.status === 'completed' ? phaseFindings(run, phase, 'outside', step) : []),
    ];
    return { consensus: phase.consensus, findings };
  });
  const draft = draftGate(phases);
  let deltaItem: string | undefined;
  if (run.delta != null) {
    const last = run.order[run.order.length - 1]!;
    deltaItem = `d${draft.items.filter((i) => i.id.startsWith('d')).length + 1}`;
    draft.items.splice(draft.items.length - 1, 0, {
      id: deltaItem,
      title: `Plan changed after ${last} cap (unreviewed since gate_rev ${run.delta.rev})`,
      kind: 'auto',
      options: [
        { key: 'a', text: 'accept the changed plan without another review round' },
        { key: 'b', text: 'reopen the phases for another round on the changed plan' },
      ],
      recommended: 'a',
      keep: 'a',
    });
    draft.findings[deltaItem] = [];
    run.delta = null;
  }
  if (run.gate !== null) run.past_gates.push(voidCheck(run.gate, run.spend));
  run.gate_rev += 1;
  run.gate = { rev: run.gate_rev, rec_rev: 1, items: draft.items, written_at: step.now, rec_hash: recHash(draft.items), findings: draft.findings, answers: {}, implementation: run.implementation, ...(deltaItem === undefined ? {} : { delta_item: deltaItem }) };
  run.state = 'gate_pending';
  run.current = null;
  step.events.push({ type: 'gate_written', at: step.now, gate_rev: run.gate_rev, items: draft.items.length });
}

/** The attempt a parent named, looked up as data: `__proto__` or `constructor` name none. */
export function attemptOf(run: RunRecord, id: string): AttemptRecord | undefined {
  return Object.hasOwn(run.attempts, id) ? run.attempts[id] : undefined;
}

/** A gate leaving force voids its pending carry check; the check's reservation goes back. */
export function voidCheck(gate: GateRecord, spend?: RunRecord['spend']): GateRecord {
  if (gate.check?.state === 'open') {
    gate.check.state = 'void';
    if (spend !== undefined) spend.reserved = Math.max(0, spend.reserved - gate.check.reserve_usd);
    gate.check.reserve_usd = 0;
  }
  return gate;
}
