import type { CrewSnapshot, LaneView } from '../../formats/console/snapshot.ts';
import { laneAttention, quietSeconds } from '../../formats/console/view.ts';

/** Lanes that need the operator listed by name; the rest are counted on one line. */
export const ATTENTION_LANES = 5;

/**
 * The terminal's live region for a crew: a few lines (at most six of figures, then up to
 * {@link ATTENTION_LANES} codes failed lanes failed with, one line each, then up to
 * {@link ATTENTION_LANES} each of stuck, waiting-for-the-owner and interrupted lanes, then
 * "and N more", then the commands that retry, answer and continue), each
 * at most `columns - 1` code points so that no line ever wraps (a wrapped row is one the
 * region cannot find again to redraw). Every value that comes from a crew file or a lane
 * (names, codes, details) is reduced to printable ASCII first: a lane id holding an escape
 * sequence or a line break must not move the cursor, and a wide character must not take
 * two columns where one was counted.
 */
export function regionLines(s: CrewSnapshot, columns: number): string[] {
  const states = Object.entries(s.byState)
    .filter(([, n]) => n > 0)
    .map(([state, n]) => `${printable(state)} ${n}`);
  const rate = s.lanesPerMinute === null ? '-' : s.lanesPerMinute.toFixed(2);
  const eta = s.etaS === null ? '-' : span(s.etaS);
  const cap = s.spend.capUsd === null ? 'no cap' : `cap $${s.spend.capUsd.toFixed(2)}`;
  // Calls of unknown cost are said so, with what each counts against the cap.
  const unpriced = (s.spend.unpriced ?? 0) === 0 ? '' : ` | ${s.spend.unpriced} unpriced call(s)${s.spend.capUsd === null || s.spend.reserveUsd === undefined ? '' : ` counted at $${s.spend.reserveUsd.toFixed(2)} each`}`;
  const p99 = s.renewalP99Ms === null ? '-' : `${s.renewalP99Ms.toFixed(2)} ms`;
  const paused = s.providers.filter((p) => p.pausedUntil !== null).map((p) => `${printable(p.provider)} ${resumes(p.pausedUntil!, s.now)}`);
  const lines = [
    `crew ${printable(s.crew)} | ${span(s.elapsedS)}${s.run === 'running' ? '' : ` | ${s.run}`}`,
    `lanes: ${states.length === 0 ? 'none' : states.join(', ')}`,
    `attempts: ${s.attempts.running} running, ${s.attempts.queued} queued | ${rate} lanes/min | ETA ${eta}`,
    `spend: $${s.spend.usd.toFixed(2)} | ${cap}${unpriced}`,
    ...(paused.length === 0 ? [] : [`rate limited: ${paused.join(', ')}`]),
    `marks: ${s.marksPerSecond.toFixed(0)}/s | renewal p99 ${p99}`,
    ...attentionLines(s),
  ];
  return lines.map((line) => fit(line, columns - 1));
}

type Attention = 'failed' | 'stuck' | 'waiting' | 'interrupted';

function attentionLines(s: CrewSnapshot): string[] {
  const needs = s.lanes
    .map((lane) => ({ lane, attention: laneAttention(lane, s) }))
    .filter((entry): entry is { lane: LaneView; attention: Attention } => entry.attention !== null);
  const of = (kind: Attention) => needs.filter((entry) => entry.attention === kind).map((entry) => entry.lane);
  // Failed lanes by code, the largest group first: one line per code, so that however many
  // lanes failed the stuck and waiting ones below keep their own lines.
  const groups: { code: string; lanes: LaneView[] }[] = [];
  for (const lane of of('failed')) {
    const code = lane.code ?? '-';
    const group = groups.find((g) => g.code === code);
    if (group === undefined) groups.push({ code, lanes: [lane] });
    else group.lanes.push(lane);
  }
  groups.sort((a, b) => b.lanes.length - a.lanes.length);
  const failed = groups.slice(0, ATTENTION_LANES).map((g) => (g.lanes.length === 1 ? failedLine(g.lanes[0]!) : groupLine(g.code, g.lanes)));
  const stuck = of('stuck');
  const waiting = of('waiting');
  const interrupted = of('interrupted');
  const named = [
    ...failed,
    ...stuck.slice(0, ATTENTION_LANES).map((lane) => stuckLine(lane, s)),
    ...waiting.slice(0, ATTENTION_LANES).map((lane) => `waiting ${printable(lane.id)} for its owner at its gate`),
    ...interrupted.slice(0, ATTENTION_LANES).map(interruptedLine),
  ];
  const left = {
    failed: groups.slice(ATTENTION_LANES).reduce((n, g) => n + g.lanes.length, 0),
    stuck: Math.max(0, stuck.length - ATTENTION_LANES),
    waiting: Math.max(0, waiting.length - ATTENTION_LANES),
    interrupted: Math.max(0, interrupted.length - ATTENTION_LANES),
  };
  const parts = (['failed', 'stuck', 'waiting', 'interrupted'] as const).filter((kind) => left[kind] > 0).map((kind) => `${left[kind]} ${kind}`);
  const more = parts.length === 0 ? [] : [`and ${Object.values(left).reduce((a, b) => a + b, 0)} more: ${parts.join(', ')}`];
  // The retry command is the crew's one command for every failed lane, whatever its code: said once, under the groups.
  const retry = groups.length > 0 && s.retryCommand !== null ? [`retry: ${printable(s.retryCommand)}`] : [];
  const answer = waiting.length > 0 && typeof s.answerCommand === 'string' ? [`answer: ${printable(s.answerCommand)}`] : [];
  const resume = (s.run === 'interrupted' || s.run === 'stopped') && s.resumeCommand !== null ? [`resume: ${printable(s.resumeCommand)}`] : [];
  return [...named, ...more, ...retry, ...answer, ...resume];
}

function groupLine(code: string, lanes: readonly LaneView[]): string {
  const ids = lanes.slice(0, ATTENTION_LANES).map((lane) => printable(lane.id)).join(', ');
  return `failed ${printable(code)} x${lanes.length}: ${ids}${lanes.length > ATTENTION_LANES ? ', ...' : ''}`;
}

function interruptedLine(lane: LaneView): string {
  const where = lane.state === 'interrupted' ? '' : ` (in ${printable(lane.state)})`;
  return `interrupted ${printable(lane.id)}${where}${lane.code == null ? '' : ` ${printable(lane.code)}`}`;
}

function failedLine(lane: LaneView): string {
  const detail = lane.detail == null ? '' : `: ${printable(lane.detail)}`;
  return `failed ${printable(lane.id)} ${printable(lane.code ?? '-')}${detail}`;
}

function stuckLine(lane: LaneView, s: CrewSnapshot): string {
  const quiet = quietSeconds(lane, s);
  return `stuck ${printable(lane.id)} (${printable(lane.state)}) quiet for ${quiet === null ? '-' : coarse(quiet)}`;
}

/** `text` as printable ASCII: every other code point (controls, escapes, wide or combining characters) becomes `?`. */
export function printable(text: string): string {
  return text.replace(/[^\x20-\x7e]/gu, '?');
}

/** `line` cut to `max` code points, an ellipsis marking the cut. */
export function fit(line: string, max: number): string {
  const points = [...line];
  if (points.length <= max) return line;
  return max <= 0 ? '' : `${points.slice(0, max - 1).join('')}…`;
}

/** Seconds as the two largest units: 42s, 4m 02s, 1h 04m. */
function span(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor(s / 60) % 60).padStart(2, '0')}m`;
}

/** A quiet spell in its largest unit (4m, 1h): stuck is minutes, seconds would only flicker. */
function coarse(seconds: number): string {
  const s = Math.floor(seconds);
  return s < 60 ? `${s}s` : s < 3600 ? `${Math.floor(s / 60)}m` : `${Math.floor(s / 3600)}h`;
}

function resumes(until: string, now: string): string {
  const left = (Date.parse(until) - Date.parse(now)) / 1000;
  return Number.isFinite(left) ? `resumes in ${span(Math.ceil(Math.max(0, left)))}` : `until ${printable(until)}`;
}
