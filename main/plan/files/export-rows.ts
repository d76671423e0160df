import { decisionId } from '../../../formats/gate/decisions.ts';
import type { RunFinding } from '../../../formats/gate/draft.ts';
import type { GateRecord, RunRecord } from '../../../formats/review/run-record.ts';
import type { DecisionRow } from '../../../formats/schemas/decisions.ts';
import type { GateItem } from '../../../formats/schemas/gate.ts';
import { checkVerdict } from './gate-document.ts';
import type { FindingRow } from '../../../formats/schemas/findings.ts';
import type { TaskRow } from '../../../formats/schemas/tasks.ts';
import type { TimingDocument } from '../../../formats/schemas/timing.ts';
import { sectionItems } from '../../../formats/review/plan-doc.ts';

type Bound = RunFinding & { attempt: string };

/**
 * decisions.jsonl of a CEO-only run: each challenge a gate would have asked becomes an
 * auto row kept at the plan's direction (auto_kept). Open Critical or High findings get
 * no row: nobody decides them; they stay in findings and tasks for the owner.
 */
export function keptRows(review: RunRecord, items: readonly GateItem[]): DecisionRow[] {
  return items.filter((item) => item.id.startsWith('uc')).map((item) => ({
    schema_version: 1,
    run: review.run,
    id: decisionId(review.run, 1, item.id),
    label: item.id,
    title: item.title,
    options: item.options.map((o) => o.key),
    recommended: item.recommended,
    kind: 'auto',
    status: 'auto_kept',
    gate_rev: 1,
    chosen: item.keep ?? null,
    source: 'ceo-only',
    ...(item.phase === undefined ? {} : { phase: item.phase }),
  }));
}

/** decisions.jsonl: one row per item of every gate revision, answered or pending. */
export function decisionRows(review: RunRecord): DecisionRow[] {
  const gates = [...review.past_gates, ...(review.gate === null ? [] : [review.gate])];
  return gates.flatMap((gate) => gate.items.map((item) => {
    const answer = gate.answers[item.id];
    const row: DecisionRow = {
      schema_version: 1,
      run: review.run,
      id: decisionId(review.run, gate.rev, item.id),
      label: item.id,
      title: item.title,
      options: item.options.map((o) => o.key),
      recommended: item.recommended,
      kind: item.id.startsWith('uc') ? 'user_challenge' : item.kind,
      status: answer?.status ?? 'pending',
      gate_rev: gate.rev,
      default_if_unanswered: item.kind === 'auto' ? (item.keep !== undefined && item.keep !== item.recommended ? item.keep : item.recommended) : null,
      rec_hash: gate.rec_hash,
      source: 'gate',
    };
    if (gate.check !== undefined && gate.check.state !== 'open') row['carry_check'] = checkVerdict(gate.check);
    if (item.phase !== undefined) row.phase = item.phase;
    if (answer !== undefined) {
      row.chosen = answer.chosen;
      row.answered_at = answer.at;
      row.reply = answer.reply;
      row.owner_mode = answer.owner_mode;
      row.owner_named = answer.owner_named;
      row.rec_hash = answer.rec_hash;
      if (answer.by !== null) row.answered_by = answer.by;
      if (answer.role !== null) row.answered_role = answer.role;
      if (answer.owner_reply !== null) row.owner_reply = answer.owner_reply;
      if (answer.carried !== undefined) {
        row.carried_gate_from = answer.carried.from;
        row.carried_gate_rev = answer.carried.rev;
        row.carried_answered_by = answer.carried.by;
      }
      if (answer.carried_under !== undefined) row.carried_under = answer.carried_under;
      if (answer.words_by !== null) {
        row.answer_words = answer.reply;
        row.words_by = answer.words_by;
      }
    } else {
      row.chosen = null;
    }
    return row;
  }));
}

/** findings.jsonl: every bound finding, with what the gate decided for it. */
export function findingRows(review: RunRecord, findings: readonly Bound[]): FindingRow[] {
  const disposition = dispositions(review.gate);
  const counterpart = new Map<string, string>();
  for (const id of review.order) {
    for (const entry of review.phases[id]?.consensus?.entries ?? []) {
      if (entry.native !== null && (entry.verdict === 'confirmed' || entry.verdict === 'disagree')) counterpart.set(entry.outside, entry.native);
    }
  }
  return findings.map((f) => {
    const attempt = review.attempts[f.attempt]!;
    const row: FindingRow = {
      schema_version: 1,
      run: review.run,
      id: f.id,
      phase: f.phase,
      voice: f.voice,
      severity: f.severity,
      title: f.title,
      model: attempt.bound?.model ?? 'unknown',
      disposition: disposition.get(f.id) ?? 'open',
      plan_items: [],
      native_counterpart: f.voice === 'outside' ? (counterpart.get(f.id) ?? null) : null,
      source: attempt.bound?.runner ?? 'host-subagent',
    };
    if (f.file !== undefined) row.file = f.file;
    if (f.line !== undefined) row.line = f.line;
    if (f.fix !== undefined) row.resolution = f.fix;
    if (f.user_challenge === true) row.user_challenge = true;
    if (f.changes !== undefined) row.changes = f.changes;
    if (f.urgent === true) row.urgent = true;
    if (f.suggested_owner !== undefined) row.suggested_owner = f.suggested_owner;
    return row;
  });
}

/** Answered `a` applies the fix to the plan (accepted); `b` carries it into the build (deferred). */
function dispositions(gate: GateRecord | null): Map<string, FindingRow['disposition'] & string> {
  const out = new Map<string, FindingRow['disposition'] & string>();
  if (gate === null) return out;
  for (const item of gate.items) {
    const answer = gate.answers[item.id];
    if (answer === undefined) continue;
    const value = item.keep !== undefined && answer.chosen !== item.keep ? 'accepted' : item.id.startsWith('uc') ? 'rejected' : 'deferred';
    for (const id of gate.findings[item.id] ?? []) out.set(id, value);
  }
  return out;
}

/**
 * tasks.jsonl: the plan's implementation items, then one blocking task per finding the
 * gate carried into the build; every task is blocked by the decisions still pending.
 */
export function taskRows(review: RunRecord, decisions: readonly DecisionRow[], findings: readonly Bound[]): TaskRow[] {
  const pending = decisions.filter((d) => d.status === 'pending').map((d) => d.id);
  const status = pending.length > 0 ? 'blocked_on_decision' : 'ready';
  const planned = plannedFiles(review);
  const rows: TaskRow[] = review.plan_items.map((item, i) => ({
    schema_version: 2,
    run: review.run,
    id: `${review.run}-t${i + 1}`,
    title: item,
    status,
    depends_on: [],
    findings: [],
    blocked_by: pending,
    acceptance: `the plan item is built and verified: ${item}`,
    item: String(i + 1),
    ...(planned[i] === undefined || planned[i]!.length === 0 ? {} : { files: [...planned[i]!] }),
  }));
  const gate = review.gate;
  if (gate === null) return rows;
  const byId = new Map(findings.map((f) => [f.id, f]));
  let n = 0;
  for (const item of gate.items) {
    const answer = gate.answers[item.id];
    if (answer === undefined || item.keep === undefined || answer.chosen !== item.keep || item.id.startsWith('uc') || item.id === 'p1') continue;
    const ids = (gate.findings[item.id] ?? []).filter((id) => byId.has(id));
    const first = byId.get(ids[0] ?? '');
    rows.push({
      schema_version: 2,
      run: review.run,
      id: `${review.run}-f${++n}`,
      title: `Resolve: ${first?.title ?? item.title}`,
      status,
      depends_on: [],
      findings: ids,
      blocked_by: pending,
      acceptance: first?.fix === undefined ? `the finding no longer holds: ${first?.title ?? item.title}` : `fixed as proposed: ${first.fix}`,
    });
  }
  return rows;
}

/**
 * Each plan item's files, from the implementation section the run reviewed (the record
 * keeps it, so a plan file edited since changes nothing). Read again from the section
 * rather than kept beside the items: records written before files were read have it too.
 * None when the section's items are not the record's (never, unless a parser changed).
 */
function plannedFiles(review: RunRecord): readonly (readonly string[])[] {
  const listed = sectionItems(review.implementation);
  const same = listed.items.length === review.plan_items.length && listed.items.every((item, i) => item === review.plan_items[i]);
  return same ? listed.files : [];
}

/** timing.json from the phases' open and close times and the attempts' bind times. */
export function timingDocument(review: RunRecord): TimingDocument {
  const seconds = (from: string | null | undefined, to: string | null | undefined) =>
    from == null || to == null ? undefined : Math.max(0, (Date.parse(to) - Date.parse(from)) / 1000);
  const phases = review.order.map((id) => {
    const phase = review.phases[id]!;
    const entry: TimingDocument['phases'][number] = { phase: id };
    if (phase.opened_at !== null) entry.started_at = phase.opened_at;
    if (phase.closed_at !== null) entry.ended_at = phase.closed_at;
    const wall = seconds(phase.opened_at, phase.closed_at);
    if (wall !== undefined) entry.wall_s = wall;
    for (const voice of ['native', 'outside'] as const) {
      const attempt = phase[voice].attempt === null ? undefined : review.attempts[phase[voice].attempt!];
      const s = seconds(attempt?.minted_at, attempt?.bound?.at);
      if (s !== undefined) entry[voice === 'native' ? 'native_s' : 'outside_s'] = s;
    }
    return entry;
  });
  const ends = review.order.map((id) => review.phases[id]!.closed_at).filter((t): t is string => t !== null).sort();
  const doc: TimingDocument = { schema_version: 1, run: review.run, started_at: review.created_at, phases, session_kind: review.session_kind };
  const total = seconds(review.created_at, ends[ends.length - 1]);
  if (total !== undefined) doc.total_wall_s = total;
  return doc;
}
