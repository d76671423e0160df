import { isOwnerWaiting, stderrSuffix, type LaneProgress } from '../../formats/crew/record.ts';
import { landLines } from '../../formats/crew/land-lines.ts';
import { commandLine } from '../../formats/text/command-line.ts';
import { oneLine } from '../../formats/text/one-line.ts';
import type { CrewTally } from '../crew/coordinator.ts';
import type { CrewEvent, CrewOutput, CrewWords } from '../crew/crew-output.ts';
import type { ControlTaken } from '../crew/crew-control-apply.ts';
import { summaryObject } from '../crew/crew-report.ts';
import { laneObject, type LaneFacts } from '../crew/lane-line.ts';
import { stopSummary } from './plan-stop-lines.ts';
import type { Io } from './io.ts';
import { sandboxWords } from './sandbox-words.ts';

/** A lane's typed call ends the CREW_LANE: line names at most (the report and the lane's story have them all). */
const CALLS_IN_LINE = 8;

/**
 * A lane's CREW_LANE: line; a failed lane's detail ends with the advice that retries it,
 * an interrupted lane's with the command that continues it (`resume`, when given), a lane
 * waiting for its owner's with the command that answers it (`answer`), each runnable as
 * printed. `cost_usd` is every call of the lane (reviewers, observers, agent turns) as
 * their streams reported it; `unpriced` its calls of unknown cost.
 */
export function laneLine(p: LaneProgress, advice: string, facts: LaneFacts & { readonly resume?: string; readonly answer?: string }): string {
  const calls = facts.calls ?? [];
  const code = p.code === null ? '' : ` code=${oneLine(p.code)}`;
  // A failed lane stays failed until it is retried, an interrupted one stopped until its
  // crew is started again: the line says how, runnable as written.
  const waiting = isOwnerWaiting(p);
  const retry =
    p.stage === 'failed' ? `; retry: ${advice}`
    : waiting && facts.answer !== undefined ? `; answer: ${facts.answer}`
    : p.stage === 'interrupted' && facts.resume !== undefined ? `; resume: ${facts.resume}`
    : '';
  // The failed call's last stderr line ends the detail, after the advice: it is the line a reader looks for.
  const evidence = stderrSuffix(p.failedCall);
  const why = p.detail ?? p.code ?? 'failed';
  const told = evidence !== '' && why.endsWith(evidence) ? why.slice(0, why.length - evidence.length) : why;
  const detail = p.detail === null && retry === '' ? '' : ` detail=${oneLine(`${told}${retry}${evidence !== '' && why.endsWith(evidence) ? evidence : ''}`)}`;
  const branch = p.branch == null ? '' : ` branch=${oneLine(p.branch)} head=${oneLine(p.head ?? '-')}`;
  // Every value escaped, the crew file's and the store's alike: a line is one line that reads as it is.
  // Each call that ended typed, <call>:<CODE>, even where its result stood (PROVIDER_NO_EXIT).
  const shown = calls.slice(0, CALLS_IN_LINE).map((c) => `${c.call}:${c.code}`);
  const typed = calls.length === 0 ? '' : ` call_codes=${oneLine([...shown, ...(calls.length > shown.length ? [`+${calls.length - shown.length}`] : [])].join(','))}`;
  const cost = ` cost_usd=${facts.cost.usd.toFixed(6)} unpriced=${facts.cost.unpriced}`;
  return `CREW_LANE: lane=${oneLine(p.lane)} status=${waiting ? 'waiting' : p.stage}${code} attempts=${p.attempts} turns=${p.turnsDone}${cost} run=${oneLine(p.runDir)}${branch}${typed}${detail}`;
}

/** The crew's last line (its view and the store's crew-run record keep it too); `waiting=<n>` only when lanes wait for their owner. */
export function summaryLine(t: CrewTally, attempts: number, durationS: number): string {
  const waiting = t.waiting > 0 ? ` waiting=${t.waiting}` : '';
  return `CREW_SUMMARY: lanes=${t.lanes} complete=${t.complete} failed=${t.failed} interrupted=${t.interrupted}${waiting} attempts=${attempts} duration_s=${durationS.toFixed(1)}`;
}

/** The words a crew keeps (its summary, a stopped review's lane detail), the same for every crew. */
export const CREW_WORDS: CrewWords = {
  summary: (facts) => summaryLine(facts.counts, facts.attempts, facts.durationS),
  stop: stopSummary,
};

/** The line (or, with --json, the object) each crew event prints: lanes and the summary on stdout, the rest on stderr. */
export function crewEventLine(event: CrewEvent, json: boolean): { readonly to: 'out' | 'err'; readonly text: string } {
  switch (event.type) {
    case 'lane_ended': {
      if (json) return { to: 'out', text: JSON.stringify(laneObject(event.progress, event.facts)) };
      const resume = event.resumeArgv === undefined ? {} : { resume: commandLine(event.resumeArgv) };
      const answer = event.answerArgv === undefined ? {} : { answer: commandLine(event.answerArgv) };
      return { to: 'out', text: laneLine(event.progress, commandLine(event.retryArgv), { ...event.facts, ...resume, ...answer }) };
    }
    case 'land':
      return { to: 'out', text: json ? JSON.stringify(event.event) : landLines(event.event).join('\n') };
    case 'summary': {
      // Lanes waiting for their owner: the command that answers them follows the summary.
      const answer = event.answerArgv === undefined ? null : commandLine(event.answerArgv);
      if (json) return { to: 'out', text: summaryObject(event.counts, event.attempts, event.durationS, event.stoppedBy, answer) };
      return { to: 'out', text: answer === null ? CREW_WORDS.summary(event) : `${CREW_WORDS.summary(event)}\nCREW_ANSWER: ${answer}` };
    }
    case 'served':
      return { to: 'err', text: `CREW_VIEW: ${event.url}` };
    case 'control':
      return { to: 'out', text: json ? JSON.stringify({ control: controlObject(event.taken) }) : controlLine(event.taken) };
    case 'sandbox':
      return { to: 'err', text: `CREW_SANDBOX: ${sandboxWords(event.state)}` };
    case 'requeued':
      return { to: 'err', text: `CREW_REQUEUED: lane=${event.lane} records=${event.records}` };
  }
}

/** A crew's output on the CLI's Io: each event worded and printed, the live view on its stderr. */
export function crewPrinter(io: Io, json: boolean): CrewOutput {
  return {
    event(event) {
      const line = crewEventLine(event, json);
      if (line.to === 'out') io.out(line.text);
      else io.err(line.text);
    },
    words: CREW_WORDS,
    errRaw: (data) => io.errRaw(data),
    get stderrIsTTY() {
      return io.stderrIsTTY;
    },
    ...(io.stderrSize === undefined ? {} : { stderrSize: () => io.stderrSize!() }),
    ...(io.onStderrResize === undefined ? {} : { onStderrResize: (listener: () => void) => io.onStderrResize!(listener) }),
  };
}

/** What a crew's CREW_CONTROL line and object say of an operator's request it took. */
function controlObject(t: ControlTaken): Record<string, unknown> {
  return { seq: t.seq, action: t.action, lane: t.lane, by: t.by, status: t.status, code: t.code, detail: t.detail };
}

/** `CREW_CONTROL: seq=<n> action=<a> lane=<id>|- by=<who> status=applied|refused [code=<CODE>] [detail=<why>]`. */
export function controlLine(t: ControlTaken): string {
  const code = t.code === null ? '' : ` code=${oneLine(t.code)}`;
  const detail = t.detail === null ? '' : ` detail=${oneLine(t.detail)}`;
  return `CREW_CONTROL: seq=${t.seq} action=${t.action} lane=${oneLine(t.lane ?? '-')} by=${oneLine(t.by)} status=${t.status}${code}${detail}`;
}
