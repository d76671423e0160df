import { decisionId } from '../gate/decisions.ts';
import { gatePageCount, gatePageItems, type NumberedItem } from '../gate/render.ts';
import { oneLine } from '../text/one-line.ts';
import type { DecisionRow } from '../schemas/decisions.ts';
import type { FindingRow } from '../schemas/findings.ts';
import type { Gate } from '../schemas/gate.ts';
import type { TimingDocument } from '../schemas/timing.ts';

/** The spend facts of the run, as the `SPEND:` line of review-record.md states them. */
export interface SpendFacts {
  readonly spent: string;
  readonly worstCase: string;
  readonly cap: string;
  readonly unknownN: string;
}

/** Everything one brief page is built from; the loader in main/brief/ reads it. */
export interface BriefInput {
  readonly gate: Gate;
  readonly decisions: readonly DecisionRow[];
  readonly findings: readonly FindingRow[];
  /** timing.json when the run directory has one. */
  readonly timing: TimingDocument | null;
  /** The SPEND line of review-record.md, when there is one. */
  readonly spend: SpendFacts | null;
  /** The run's own summary (--summary or summary.md), replacing the generated sentence. */
  readonly summary: string | null;
  /** The run directory, absolute, as the answer command names it. */
  readonly runDir: string;
}

export interface BriefOptions {
  readonly page: number;
  readonly captain: boolean;
}

export const URGENT_HEADING = '## URGENT, outside this plan';

/** The phrase `brief close` rewrites; a plan line carrying it states a provisional direction. */
export const DRAFT_DIRECTION_PHRASE = 'draft direction stands until the owner decides';

const SPEND_LINE = /^SPEND: spent=(\d+\.\d{2}) reserved=\d+\.\d{2} unknown=(\d+)\(\d+\.\d{2}\) worst_case=(\d+\.\d{2}) cap=(none|\d+\.\d{2})\s*$/;

/** The last well-formed `SPEND:` line of review-record.md, or null when it has none. */
export function parseSpendLine(record: string): SpendFacts | null {
  let found: SpendFacts | null = null;
  for (const line of record.split('\n')) {
    const m = SPEND_LINE.exec(line);
    if (m !== null) found = { spent: m[1]!, unknownN: m[2]!, worstCase: m[3]!, cap: m[4]! };
  }
  return found;
}

/** How many pages the brief has: the gate's pages of seven. */
export function briefPageCount(gate: Pick<Gate, 'items'>): number {
  return gatePageCount(gate);
}

/** The decision row of a gate item at the gate's revision, found by its contract id. */
export function rowOf(input: Pick<BriefInput, 'gate' | 'decisions'>, itemId: string): DecisionRow | undefined {
  const id = decisionId(input.gate.run, input.gate.gate_rev, itemId);
  return input.decisions.find((row) => row.id === id);
}

/** A decision is decided once its row records a choice; anything else is pending. */
export function isDecided(row: DecisionRow | undefined): row is DecisionRow & { chosen: string } {
  return row !== undefined && row.status !== 'pending' && typeof row.chosen === 'string';
}

/** The date part of an ISO time, or the value escaped when it is not one. */
export function decidedOn(row: DecisionRow): string {
  const at = row.answered_at;
  if (at === undefined) return 'an unrecorded date';
  return /^\d{4}-\d{2}-\d{2}/.test(at) ? at.slice(0, 10) : oneLine(at);
}

/**
 * The option an unanswered auto item takes: its row's default_if_unanswered, else the
 * option that keeps the plan, else the recommendation (the review-run driver's rule).
 */
export function defaultOf(item: NumberedItem | Gate['items'][number], row: DecisionRow | undefined): string {
  if (row !== undefined && typeof row.default_if_unanswered === 'string') return row.default_if_unanswered;
  return item.keep ?? item.recommended;
}

/**
 * One page of the owner brief: the URGENT block, the summary, the page's numbered
 * decisions, the cost, the relaying-agent trailer with --captain, and last the line
 * naming review-record.md and the answer command. Every value taken from the input goes
 * through oneLine, and every line carrying one starts with text of ours, so no input can
 * forge a line.
 */
export function renderBrief(input: BriefInput, options: BriefOptions): string[] {
  const { gate } = input;
  const pages = briefPageCount(gate);
  const lines = [URGENT_HEADING, ''];
  const urgent = input.findings.filter((f) => f.urgent === true);
  if (urgent.length === 0) lines.push('None.');
  for (const f of urgent) {
    lines.push(`- [${f.severity}] ${oneLine(f.title)} (${oneLine(f.id)}; suggested owner: ${oneLine(f.suggested_owner ?? 'unassigned')})`);
  }
  lines.push('', `Summary: ${input.summary === null ? summarySentence(input) : summaryText(input.summary)}`, '');
  const items = gatePageItems(gate, options.page);
  const first = items[0]?.number ?? 0;
  const last = items[items.length - 1]?.number ?? 0;
  lines.push(`## Decisions: gate_rev ${gate.gate_rev}, page ${options.page} of ${pages}, items ${first}-${last} of ${gate.items.length}`, '');
  for (const item of items) lines.push(...renderDecision(item, rowOf(input, item.id)));
  if (options.page < pages) {
    lines.push(`More decisions: laneward brief render --out ${shellWord(input.runDir)} --page ${options.page + 1}`, '');
  }
  const cost = costSentence(input.spend);
  if (options.captain) {
    lines.push('### Cost', '', cost, '', '### For the relaying agent', '');
    lines.push(...relayTrailer(input));
    lines.push('');
  } else {
    lines.push(cost, '');
  }
  lines.push(lastLine(input));
  return lines;
}

/** One decision: `<n>. <id> [<kind>] <title>`, its options, then its state. */
function renderDecision(item: NumberedItem, row: DecisionRow | undefined): string[] {
  const lines = [`${item.number}. ${oneLine(item.id)} [${item.kind}] ${oneLine(item.title)}`];
  for (const option of item.options) {
    const recommended = option.key === item.recommended ? ' (recommended)' : '';
    const keeps = option.key === item.keep ? ' (keeps the plan)' : '';
    lines.push(`   ${oneLine(option.key)}) ${oneLine(option.text)}${recommended}${keeps}`);
  }
  if (isDecided(row)) {
    lines.push(`   decided ${oneLine(item.id)}${oneLine(row.chosen)} on ${decidedOn(row)}`);
  } else if (item.kind === 'auto') {
    const taken = defaultOf(item, row);
    const text = item.options.find((o) => o.key === taken)?.text;
    // The driver keeps the plan's direction for an unanswered item; rec still takes the fix.
    const rec = taken === item.recommended ? '' : `; rec takes ${oneLine(item.recommended)}`;
    lines.push(`   if unanswered: ${oneLine(taken)}${text === undefined ? '' : ` (${oneLine(text)})`}${rec}`);
  } else {
    lines.push('   pending until you answer');
  }
  lines.push('');
  return lines;
}

/** The run's own summary as one line: its lines joined by spaces, control characters escaped. */
export function summaryText(text: string): string {
  return oneLine(text.split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== '').join(' '));
}

/** The generated summary: phases, findings, decisions and cycle time in one sentence. */
export function summarySentence(input: BriefInput): string {
  const parts: string[] = [];
  const phases = input.timing?.phases;
  if (phases === undefined) parts.push('phases closed not recorded (no timing.json)');
  else {
    const closed = phases.filter((p) => p.ended_at !== undefined);
    parts.push(`${closed.length} of ${phases.length} phases closed${closed.length === 0 ? '' : ` (${closed.map((p) => oneLine(p.phase)).join(', ')})`}`);
  }
  const by = (...dispositions: string[]) => input.findings.filter((f) => dispositions.includes(f.disposition ?? 'open')).length;
  parts.push(`${input.findings.length} finding(s): ${by('accepted', 'partially_accepted')} accepted, ${by('deferred')} deferred, ${by('rejected')} rejected, ${by('fixed')} fixed, ${by('open')} open`);
  const items = input.gate.items.map((item) => ({ item, row: rowOf(input, item.id) }));
  const decided = items.filter(({ row }) => isDecided(row)).length;
  const defaults = items.filter(({ item, row }) => item.kind === 'auto' && !isDecided(row)).length;
  const waiting = items.filter(({ item, row }) => item.kind === 'approval' && !isDecided(row)).length;
  parts.push(`${input.gate.items.length} decision(s) at gate_rev ${input.gate.gate_rev}: ${decided} decided, ${defaults} take their default if unanswered, ${waiting} wait for your answer`);
  const total = input.timing?.total_wall_s;
  parts.push(total === undefined ? 'cycle time not recorded' : `cycle time ${duration(total)}`);
  return `${parts.join('; ')}.`;
}

/** `Cost so far:` from the SPEND line; the source is named when there is none. */
export function costSentence(spend: SpendFacts | null): string {
  if (spend === null) return 'Cost so far: not recorded (review-record.md has no SPEND line).';
  const unknown = spend.unknownN === '0' ? '' : ` (${spend.unknownN} attempt(s) of unknown cost counted at their reservation)`;
  return `Cost so far: $${spend.spent} spent, $${spend.worstCase} worst case${unknown}, cap ${spend.cap === 'none' ? 'none' : `$${spend.cap}`}.`;
}

/** What an agent relaying the brief must do, so the owner's words reach the run intact. */
function relayTrailer(input: BriefInput): string[] {
  const dir = shellWord(input.runDir);
  return [
    'Relay this page to the owner unchanged and answer nothing yourself.',
    "Pass the owner's reply back with the owner's words verbatim:",
    `laneward plan answer --out ${dir} --gate-rev ${input.gate.gate_rev} --reply "<reply>" --by agent:<your-id> --owner-reply "<the owner's words, verbatim>"`,
  ];
}

/** The last line: where the full review lives and the exact call that answers this page. */
function lastLine(input: BriefInput): string {
  const dir = shellWord(input.runDir);
  const record = shellWord(`${input.runDir}/review-record.md`);
  const open = input.gate.items.some((item) => !isDecided(rowOf(input, item.id)));
  if (!open) return `Full review: ${record}; gate_rev ${input.gate.gate_rev} is decided, nothing to answer.`;
  return `Full review: ${record}; answer: laneward plan answer --out ${dir} --gate-rev ${input.gate.gate_rev} --reply "<reply>" --by human`;
}

/** `1h 04m 05s`, `4m 05s`, `42s`: whole seconds, the largest unit first. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = s % 60;
  const pad = (n: number) => String(n).padStart(2, '0');
  if (h > 0) return `${h}h ${pad(m)}m ${pad(rest)}s`;
  if (m > 0) return `${m}m ${pad(rest)}s`;
  return `${rest}s`;
}

/** A path the owner can paste into a shell, escaped so it stays on one line. */
export function shellWord(path: string): string {
  const word = /^[\w./@%+=:,-]+$/.test(path) ? path : `'${path.replaceAll("'", `'\\''`)}'`;
  return oneLine(word);
}
