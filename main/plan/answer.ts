import { LanewardError } from '../../formats/error.ts';
import { decisionId } from '../../formats/gate-decisions.ts';
import { answerGate, type Choice, type ParsedReply } from '../../formats/gate-reply.ts';
import type { GateAnswer, JournalEvent, RunRecord } from '../../formats/review-run.ts';
import type { GateItem } from '../../formats/schemas/gate.ts';
import { transact } from '../store/store.ts';
import { isDoIt } from './carry.ts';
import { voidCheck } from './machine.ts';
import { checkpointAfter } from './checkpoint.ts';
import { describeRun } from './describe.ts';
import { locateRun, type PlanEnv } from './locate.ts';
import { currentPlanSha } from './plan-file.ts';
import { emptyReport, terminalStatus, type PlanReport } from './report.ts';
import { syncRunFiles } from './run-files.ts';

export interface AnswerOptions {
  readonly out: string | undefined;
  readonly gateRev: number | undefined;
  readonly reply: string | undefined;
  readonly by?: string;
  /** The owner's own words, when an agent relays them. */
  readonly ownerReply?: string;
  /** Who the words are by, when not the owner's (an agent deciding on its own authority). */
  readonly wordsBy?: string;
  /** The rec_hash of the render the owner saw; needed once a recommendation changed. */
  readonly recHash?: string;
}

// An id is visible text: no space, control, format (bidi) or separator character.
const BY = /^(human|agent:[^\s\p{C}\p{Z}]+)$/u;

/**
 * `plan answer`: applies a reply to the gate through the reply grammar. A stale gate
 * revision, an unparsed reply or owner words that resolve differently apply nothing. A
 * reply that leaves approval items pending records only what it answered; a later reply
 * never overwrites an earlier answer. Unanswered auto items whose recommendation would
 * change the plan keep the plan's direction unless the owner approved with the
 * recommended changes (p1b) or said `rec`.
 */
export async function planAnswer(options: AnswerOptions, penv: PlanEnv): Promise<PlanReport> {
  if (options.gateRev === undefined) throw new LanewardError('USAGE', '--gate-rev <n> is required (the gate_rev on the GATE line)');
  if (options.reply === undefined) throw new LanewardError('USAGE', '--reply "<reply>" is required');
  if (options.by !== undefined && !BY.test(options.by)) throw new LanewardError('USAGE', `--by must be human or agent:<id>, got ${JSON.stringify(options.by)}`);
  if (options.wordsBy !== undefined && !/^agent:[^\s\p{C}\p{Z}]+$/u.test(options.wordsBy)) throw new LanewardError('USAGE', `--words-by must be agent:<id>, got ${JSON.stringify(options.wordsBy)}`);
  // Words an agent answers in on its own authority are that very agent's: they are recorded
  // under its name, and the answer under --by; the two name one agent.
  if (options.wordsBy !== undefined && options.wordsBy !== options.by) {
    throw new LanewardError('ANSWER_WORDS_BY_MISMATCH', `--words-by ${options.wordsBy} is not the answering agent (--by ${options.by ?? 'absent'}); an agent answers in its own words with --by and --words-by naming itself`);
  }
  const located = locateRun(options.out, penv);
  const { store, runDir } = located;
  const runId = located.record.run;
  const report = emptyReport(runDir, runId);
  const now = new Date().toISOString();
  const reply = options.reply;

  const record = await transact(store, runId, (current) => {
    if (current === undefined) throw new LanewardError('RUN_NOT_INITIALIZED', `run ${runId} vanished from ${store.root}`);
    const run = current;
    run.commands += 1;
    if (run.ceo_only) throw new LanewardError('CEO_ONLY_NO_GATE', `run ${runId} is a CEO-only run: there is no gate to answer`);
    const gate = run.gate;
    if (gate === null || run.state !== 'gate_pending') {
      throw new LanewardError(gate === null ? 'PHASE_NOT_AWAITING' : 'GATE_REV_STALE', gate === null ? 'the run has no gate yet; drive it with plan next' : `the gate at gate_rev ${gate.rev} is already decided (${run.state})`);
    }
    if (run.session_kind === 'unattended' && options.by === undefined) {
      throw new LanewardError('ANSWER_BY_REQUIRED', 'an unattended run records who answered: pass --by human or --by agent:<id>');
    }
    const role = options.by === undefined ? null : options.by === 'human' ? 'human' : 'agent';
    if (role === 'agent' && options.ownerReply === undefined && options.wordsBy === undefined) {
      throw new LanewardError('OWNER_REPLY_REQUIRED', `${options.by} relays the owner: pass the owner's words (--owner-reply, --owner-reply-file or -) or --words-by ${options.by}`);
    }
    const parsed = answerGate({ gate_rev: gate.rev, items: gate.items }, reply, options.gateRev!);
    if (!parsed.ok) throw new LanewardError(parsed.code, parsed.detail);
    const takesRecs = parsed.mode === 'rec' || parsed.mode === 'rec_except' || chosenBy(parsed, gate.items.find((i) => i.id === 'p1')!) === 'b';
    if (takesRecs && gate.rec_rev > 1 && options.recHash !== gate.rec_hash) {
      throw new LanewardError('GATE_REC_STALE', `the recommendations changed (rec_rev ${gate.rec_rev}); answer with --rec-hash ${gate.rec_hash} after the owner saw them${options.recHash === undefined ? '' : ` (got ${options.recHash})`}`);
    }
    if (options.ownerReply !== undefined && options.wordsBy === undefined) {
      const words = answerGate({ gate_rev: gate.rev, items: gate.items }, isDoIt(options.ownerReply) ? 'rec' : options.ownerReply, gate.rev);
      if (!words.ok || !sameChoices(words, parsed)) {
        throw new LanewardError('GATE_OWNER_REPLY_MISMATCH', words.ok ? 'the owner\'s words resolve to other choices than --reply' : `the owner's words do not parse: ${words.detail}`);
      }
    }
    const events: JournalEvent[] = [];
    // The owner answering makes a pending carry check moot.
    voidCheck(gate, run.spend);
    const approvalsLeft = gate.items.filter((item) => item.kind === 'approval' && gate.answers[item.id] === undefined && chosenBy(parsed, item) === null);
    const complete = approvalsLeft.length === 0;
    const p1 = gate.answers['p1']?.chosen ?? chosenBy(parsed, gate.items.find((i) => i.id === 'p1')!);
    const stamp = { reply, at: now, by: options.by ?? null, role, owner_mode: parsed.mode, owner_reply: options.wordsBy === undefined ? (options.ownerReply ?? null) : null, words_by: options.wordsBy ?? null, rec_hash: gate.rec_hash } as const;
    for (const item of gate.items) {
      if (gate.answers[item.id] !== undefined) continue;
      const found = parsed.choices.find((c) => c.id === item.id)!;
      let chosen = answered(found) ? found.chosen : null;
      // Defaults apply only when the reply completes the gate.
      if (chosen === null && complete && item.kind === 'auto') {
        chosen = item.keep !== undefined && item.recommended !== item.keep && p1 !== 'b' ? item.keep : item.recommended;
      }
      if (chosen === null) continue;
      const answer: GateAnswer = {
        chosen,
        status: chosen === item.recommended ? 'approved' : item.id === 'p1' && chosen === 'c' ? 'rejected' : 'overridden',
        source: answered(found) ? found.source : 'default',
        owner_named: found.owner_named,
        ...stamp,
      };
      gate.answers[item.id] = answer;
      recordChoice(run, item, chosen, report);
      const decision = decisionId(run.run, gate.rev, item.id);
      events.push({ type: 'decision_recorded', at: now, decision, chosen, source: answer.source, by: options.by ?? null });
    }
    if (events.length === 0) {
      // Every item the reply answers was answered before (p1a after a hold, a second as-is):
      // refused like a reply to a decided gate, so two racing answers end the same whatever
      // their order: the first applies, the second is refused.
      const held = gate.answers['p1']?.chosen === 'c' ? ' (p1c holds it until the plan is revised)' : '';
      throw new LanewardError('GATE_REV_STALE', `the reply applies nothing: every item it answers is already answered at gate_rev ${gate.rev}${held}; a later reply never overwrites an earlier answer`);
    }
    if (complete) settleGate(run, gate.answers['p1']?.chosen ?? null, now, events);
    run.updated_at = now;
    return { change: { record: run, events }, result: run };
  });
  syncRunFiles(store, record, runDir);
  const sha = currentPlanSha(record.plan_source);
  if (sha !== null && sha !== record.plan_sha256) report.notes.push(`PLAN_SOURCE_CHANGED: ${record.plan_source} sha256=${sha.slice(0, 12)} reviewed=${record.plan_sha256.slice(0, 12)}`);
  checkpointAfter(store, record, runDir, penv.env, report.after);
  describeRun(record, runDir, report, { open: true });
  report.status = terminalStatus(record.state);
  return report;
}

/** APPROVED for every recorded choice; APPLY and a pending amendment for a plan change. */
export function recordChoice(run: RunRecord, item: GateItem, chosen: string, report: PlanReport): void {
  const decision = decisionId(run.run, run.gate!.rev, item.id);
  report.approved.push({ decision, key: chosen });
  if (item.keep !== undefined && chosen !== item.keep && item.id !== 'p1') {
    const text = item.options.find((o) => o.key === chosen)?.text ?? chosen;
    run.amendments.push({ decision, title: item.title, chosen: text });
    report.applied.push({ decision, title: item.title, chosen: text });
  }
}

/** The run's state once every approval item is answered, by what p1 chose. */
export function settleGate(run: RunRecord, p1: string | null, now: string, events: JournalEvent[]): void {
  if (p1 === 'a' || p1 === 'b') run.state = 'complete';
  else if (p1 === 'e') run.state = 'incomplete';
  else if (p1 === 'd') rerunAll(run, now, events);
  // p1c: the owner holds the gate until the plan is revised; it stays gate_pending.
  events.push({ type: 'gate_settled', at: now, gate_rev: run.gate!.rev, p1, state: run.state });
}

/** p1d: every phase runs again on the current plan; the next gate is gate_rev + 1. */
function rerunAll(run: RunRecord, now: string, events: JournalEvent[]): void {
  for (const id of run.order) {
    const phase = run.phases[id]!;
    phase.state = 'waiting';
    phase.native = { status: 'pending', attempt: null };
    phase.outside = { status: 'pending', attempt: null };
    phase.consensus = null;
  }
  run.amendments = [];
  run.current = null;
  run.state = 'phase_closed';
  events.push({ type: 'phases_reopened', at: now, phases: run.order });
}

function answered(found: Choice): boolean {
  return found.source === 'pick' || found.source === 'rec' || found.source === 'keep';
}

function chosenBy(parsed: ParsedReply, item: GateItem): string | null {
  const found = parsed.choices.find((c) => c.id === item.id);
  return found !== undefined && answered(found) ? found.chosen : null;
}

function sameChoices(a: ParsedReply, b: ParsedReply): boolean {
  return a.choices.every((c, i) => {
    const other = b.choices[i]!;
    return (answered(c) ? c.chosen : null) === (answered(other) ? other.chosen : null);
  });
}
