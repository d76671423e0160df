import type { Choice, ParsedReply } from './reply.ts';
import type { DecisionRow } from '../schemas/decisions.ts';
import type { Gate, GateItem } from '../schemas/gate.ts';

/** Who answered and when; `at` and `by` are recorded only on rows the reply resolved. */
export interface AnswerStamp {
  /** The raw reply text, kept verbatim so the decision can be audited against it. */
  readonly reply: string;
  /** ISO time the reply was applied. */
  readonly at: string;
  readonly by?: string;
}

/**
 * The decisions.jsonl row id: `<run>-<label>` at gate revision 1, `<run>-r<rev>-<label>`
 * after a reopen, so rows of two revisions can share one file without colliding.
 */
export function decisionId(run: string, gateRev: number, label: string): string {
  const id = label.toLowerCase();
  return gateRev === 1 ? `${run}-${id}` : `${run}-r${gateRev}-${id}`;
}

/** One decisions v1 row per gate item, in gate order, from a reply that parsed. */
export function decisionRows(gate: Gate, parsed: ParsedReply, stamp: AnswerStamp): DecisionRow[] {
  const byId = new Map(parsed.choices.map((found) => [found.id, found]));
  return gate.items.map((item) => {
    const found = byId.get(item.id);
    // parseReply yields a choice for every item; a missing one is a caller mixing gates.
    if (found === undefined) throw new Error(`no choice for gate item ${item.id}`);
    return decisionRow(gate, item, found, parsed.mode, stamp);
  });
}

function decisionRow(gate: Gate, item: GateItem, found: Choice, mode: ParsedReply['mode'], stamp: AnswerStamp): DecisionRow {
  const row: DecisionRow = {
    schema_version: 1,
    run: gate.run,
    id: decisionId(gate.run, gate.gate_rev, item.id),
    label: item.id,
    title: item.title,
    options: item.options.map((option) => option.key),
    recommended: item.recommended,
    kind: item.kind,
    status: found.status,
    gate_rev: gate.gate_rev,
    // Approval items have no default: unanswered, they wait for the owner.
    default_if_unanswered: item.kind === 'auto' ? item.recommended : null,
  };
  if (item.phase !== undefined) row.phase = item.phase;
  row.chosen = found.chosen;
  row.reply = stamp.reply;
  row.owner_mode = mode;
  row.owner_named = found.owner_named;
  if (found.chosen !== null) {
    row.answered_at = stamp.at;
    if (stamp.by !== undefined) row.answered_by = stamp.by;
  }
  return row;
}
