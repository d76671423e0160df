import type { AttemptStory, GateStory, LaneStory, PhaseStory } from '../../formats/console/lane-story.ts';
import type { AttemptRecord, AttemptState, CarryCheck, GateRecord, JournalEvent, PhaseRecord, RunRecord } from '../../formats/review/run-record.ts';
import { boundedLine, linesOr, numberOr, stringOr } from './story-values.ts';

/** A reviewer attempt's state, as the lane's page words it. */
const OUTCOME_OF: Record<AttemptState, string> = {
  open: 'open',
  bound: 'completed',
  failed: 'failed',
  unavailable: 'unavailable',
  abandoned: 'cancelled',
  released: 'released',
};

/** What the journal says of one attempt: its last dispatch and its last supervision's facts. */
interface Supervised {
  dispatchedAt: string | null;
  outcome: JournalEvent | null;
}

/**
 * The run's reviewer attempts in mint order, each with the supervision facts its journal
 * kept: the last dispatch (a dispatch taken back before its provider started is made
 * again) and the last outcome (an orphan adopted by a later driver is journaled again).
 */
export function reviewAttempts(record: RunRecord, journal: readonly JournalEvent[]): AttemptStory[] {
  const seen = supervisionOf(journal);
  const attempts = Object.values(record.attempts).sort((a, b) => mintNumber(a) - mintNumber(b));
  const reviewers = attempts.map((attempt) => reviewerAttempt(record.run, attempt, seen.get(attempt.id)));
  const checks = [...record.past_gates, ...(record.gate === null ? [] : [record.gate])].flatMap((gate) => (gate.check === undefined ? [] : [carryCheckAttempt(record.run, gate.check, journal)]));
  return [...reviewers, ...checks];
}

function supervisionOf(journal: readonly JournalEvent[]): Map<string, Supervised> {
  const seen = new Map<string, Supervised>();
  for (const event of journal) {
    if (event.type !== 'attempt_dispatched' && event.type !== 'attempt_outcome') continue;
    const id = stringOr(event['attempt'], null);
    if (id === null) continue;
    const entry = seen.get(id) ?? { dispatchedAt: null, outcome: null };
    if (event.type === 'attempt_dispatched') entry.dispatchedAt = event.at;
    else entry.outcome = event;
    seen.set(id, entry);
  }
  return seen;
}

function reviewerAttempt(run: string, attempt: AttemptRecord, seen: Supervised | undefined): AttemptStory {
  const outcome = seen?.outcome ?? null;
  const field = (name: string) => (outcome === null ? undefined : outcome[name]);
  const cleanup = field('cleanup_confirmed');
  return {
    id: shortId(run, attempt.id),
    kind: 'reviewer',
    voice: attempt.voice,
    phase: attempt.phase,
    model: attempt.bound?.model ?? null,
    outcome: OUTCOME_OF[attempt.state] ?? attempt.state,
    code: attempt.code ?? stringOr(field('code'), null),
    detail: attempt.why === undefined ? null : boundedLine(attempt.why),
    startedAt: seen?.dispatchedAt ?? attempt.dispatched_at ?? null,
    durationMs: numberOr(field('duration_ms'), null),
    marks: numberOr(field('marks'), null),
    cleanupConfirmed: typeof cleanup === 'boolean' ? cleanup : (attempt.orphan?.cleanup_confirmed ?? null),
    costUsd: numberOr(field('cost_usd'), null) ?? attempt.bound?.usage_usd ?? null,
    session: stringOr(field('session'), null),
    exitCode: numberOr(field('child_exit'), null),
    signal: stringOr(field('signal'), null),
    stderr: linesOr(field('stderr')),
  };
}

/** A gate's carry check: one read of a plan change by a reviewer of another family. */
function carryCheckAttempt(run: string, check: CarryCheck, journal: readonly JournalEvent[]): AttemptStory {
  const started = journal.find((event) => event.type === 'carry_check_started' && event['attempt'] === check.attempt);
  const outcome = check.state === 'open' ? 'open' : check.state === 'unavailable' ? 'unavailable' : check.state === 'void' ? 'cancelled' : 'completed';
  return {
    id: shortId(run, check.attempt),
    kind: 'reviewer',
    voice: 'carry-check',
    phase: null,
    model: check.model ?? null,
    outcome,
    code: null,
    detail: check.why === undefined ? (outcome === 'completed' ? `verdict ${check.state}` : null) : boundedLine(check.why),
    startedAt: started?.at ?? null,
    durationMs: null,
    marks: null,
    cleanupConfirmed: null,
    costUsd: null,
    session: null,
  };
}

/** The review as decided: each phase of the run's order, its latest gate, its spend. */
export function reviewSummary(record: RunRecord | undefined): LaneStory['review'] {
  if (record === undefined) return { status: null, phases: [], gate: null, spendUsd: null };
  const phases = record.order.flatMap((id) => {
    const phase = record.phases[id];
    return phase === undefined ? [] : [phaseStory(record, phase)];
  });
  return { status: record.state, phases, gate: record.gate === null ? null : gateStory(record.gate), spendUsd: record.spend.spent };
}

function phaseStory(record: RunRecord, phase: PhaseRecord): PhaseStory {
  const found = (attempt: string | null) => (attempt === null || !Object.hasOwn(record.attempts, attempt) ? 0 : (record.attempts[attempt]?.bound?.findings ?? 0));
  const c = phase.consensus;
  return {
    phase: phase.id,
    state: phase.state,
    native: phase.native.status,
    outside: phase.outside.status,
    findings: found(phase.native.attempt) + found(phase.outside.attempt),
    consensus: c === null ? null : { coverage: c.coverage, confirmed: c.confirmed, unverified: c.unverified, disagree: c.disagree, new: c.new, nativeOnly: c.native_only },
  };
}

function gateStory(gate: GateRecord): GateStory {
  const answers = gate.items.flatMap((item) => (Object.hasOwn(gate.answers, item.id) ? [{ item: item.id, answer: gate.answers[item.id]! }] : []));
  const last = answers.reduce<(typeof answers)[number] | undefined>((latest, entry) => (latest === undefined || entry.answer.at > latest.answer.at ? entry : latest), undefined);
  return {
    rev: gate.rev,
    state: answers.length === gate.items.length ? 'answered' : 'pending',
    items: gate.items.length,
    decisions: answers.length,
    answer: last?.answer.reply ?? null,
    by: last?.answer.by ?? null,
    at: last?.answer.at ?? null,
    choices: answers.map(({ item, answer }) => ({ item, chosen: answer.chosen, status: answer.status })),
  };
}

/** `<run>-a3` is `a3`, as the run directory's files name it. */
function shortId(run: string, id: string): string {
  return id.startsWith(`${run}-`) ? id.slice(run.length + 1) : id;
}

function mintNumber(attempt: AttemptRecord): number {
  const n = Number(attempt.id.slice(attempt.id.lastIndexOf('-a') + 2));
  return Number.isFinite(n) ? n : Number.MAX_SAFE_INTEGER;
}
