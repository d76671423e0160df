import { oneLine } from '../../formats/text/one-line.ts';
import { spendLine, usd } from '../plan/core/spend.ts';
import type { PlanReport, ReportFact, TerminalStatus } from '../plan/core/report.ts';

/**
 * The printed lines of a plan report, in the contract's order. Every value from input is
 * escaped where it is put in, and every line once more as a whole, so a note, a checkpoint
 * line or a message that carries a value no one escaped still prints as one line.
 */
export function reportLines(report: PlanReport, terminal: boolean): string[] {
  const lines: string[] = [];
  if (report.stateRoot !== undefined) lines.push(`STATE_ROOT: ${oneLine(report.stateRoot.path)} durable=${report.stateRoot.durable ? 'yes' : 'no'}`);
  lines.push(...report.notes.map(factLine));
  if (report.phase !== undefined) lines.push(`PHASE: ${report.phase.id} snapshot=${report.phase.snapshot} order=${report.phase.order.join(',')}`);
  lines.push(...report.scope.map(factLine));
  for (const a of report.attempts) {
    lines.push(`ATTEMPT: ${a.id} phase=${a.phase} voice=${a.voice} prompt=${oneLine(a.prompt)} result=${oneLine(a.result)} model_family=${oneLine(a.family)}`);
  }
  if (report.spend !== undefined) lines.push(spendLine(report.spend));
  for (const b of report.bound) {
    lines.push(`BOUND: ${b.attempt} phase=${b.phase} voice=${b.voice} model=${oneLine(b.model)} findings=${b.findings} sha256=${b.sha256.slice(0, 12)}`);
  }
  for (const c of report.closed) {
    lines.push(`PHASE_CLOSED: ${c.phase} confirmed=${c.confirmed} unverified=${c.unverified} disagree=${c.disagree} new=${c.new} native_only=${c.native_only} coverage=${c.coverage}`);
  }
  for (const u of report.unknown) lines.push(`EXECUTION_UNKNOWN: ${u.attempt} phase=${u.phase} voice=${u.voice}`);
  if (report.gate !== undefined) {
    const g = report.gate;
    lines.push(`GATE: gate_rev=${g.rev} items=${g.items} pending=${g.pending} file=${oneLine(g.file)}`);
    lines.push(`GATE_REC: rec_rev=${g.recRev} rec_hash=${g.recHash}`);
  }
  lines.push(...report.carry.map(factLine));
  for (const a of report.applied) lines.push(`APPLY: ${a.decision} ${oneLine(a.title)} -> ${oneLine(a.chosen)}`);
  for (const a of report.approved) lines.push(`APPROVED: ${a.decision} ${a.key}`);
  lines.push(...report.after.map(factLine));
  if (terminal) lines.push(resultLine(report.status, report.run === null ? '-' : report.runDir));
  return lines.map(oneLine);
}

export function resultLine(status: TerminalStatus, runDir: string): string {
  return `GSTACK_RESULT: skill=autoplan status=${status} run=${runDir === '-' ? '-' : oneLine(runDir)}`;
}

/** The one line a report fact prints as (--json gives the same text in `notes` and `lines`). */
export function factLine(f: ReportFact): string {
  switch (f.fact) {
    case 'session_kind_unknown':
      return f.note;
    case 'estimate':
      return estimateLine(f);
    case 'plan_changed':
      return `${f.since === 'review' ? 'PLAN_CHANGED' : 'PLAN_SOURCE_CHANGED'}: ${f.source} sha256=${f.sha256.slice(0, 12)} reviewed=${f.reviewed.slice(0, 12)}`;
    case 'run_status':
      return `RUN: ${f.run} status=${f.status} state_root=${oneLine(f.stateRoot)} gate_rev=${f.gateRev} session_kind=${f.sessionKind}`;
    case 'phase_status':
      return `PHASE_STATUS: ${f.phase} state=${f.state} native=${f.native} outside=${f.outside}`;
    case 'voice_failed':
      return `VOICE_FAILED: ${f.attempt} phase=${f.phase} voice=${f.voice} status=${f.status} code=${oneLine(f.code)}`;
    case 'restored':
      return `RESTORED: run=${f.run} generation=${f.generation} from=${oneLine(f.from)}`;
    case 'scope':
      return `SCOPE: ui=${yn(f.ui)} (${f.uiWhy}) dx=${yn(f.dx)} (${f.dxWhy}) source=${f.source}`;
    case 'scope_pin':
      return `SCOPE_PIN: add ${f.pin} as the first line of ${f.plan}`;
    case 'carry_check_started':
      return `CARRY_CHECK: ${f.attempt} prompt=${f.prompt} result=${f.result} model_family=differs from ${f.families.join(',') || 'the plan reviewers'}`;
    case 'carry_check_verdict':
      return `CARRY_CHECK: ${f.attempt} verdict=${f.verdict} findings=${f.findings} severe=${f.severe} sha256=${f.sha256.slice(0, 12)}`;
    case 'carry_refused':
      return `CARRY: no (${oneLine(f.why)})`;
    case 'carried_under_do_it':
      return `CARRIED_UNDER_DO_IT: ${f.decision} ${oneLine(f.title)} -> ${f.chosen}`;
    case 'carried':
      return `CARRIED: gate_rev=${f.gateRev} <- gate_rev=${f.fromRev} words="${oneLine(f.words)}" by=${f.by ?? 'unrecorded'} reason=nothing new needs the owner`;
    case 'voice':
      return `VOICE: ${f.attempt} phase=${f.phase} voice=${f.voice} status=${f.status}${f.code === null ? '' : ` code=${f.code}`}`;
    case 'reviewed':
      return `REVIEWED: run=${f.run} phase=${f.phase} confirmed=${f.confirmed} new=${f.new} native_only=${f.native_only}`;
    case 'cycle':
      return `CYCLE: run=${f.run} wall_s=${Math.round(f.wallS)} phases=${f.phases.map((p) => `${p.phase}:${Math.round(p.seconds)}s`).join(',')}`;
    case 'amendment':
      return `${f.verb === 'settled' ? 'SETTLED' : 'WITHDRAWN'}: ${f.decision} pending=${f.pending}`;
    case 'revised':
      return `REVISED: run=${f.run} plan_rev=${f.planRev} reopened=${f.reopened.join(',') || '-'}${f.capped ? ' capped=yes' : ''} incorporated=${f.incorporated.join(',') || '-'} pending=${f.pending}`;
    case 'recommend':
      return `RECOMMEND: ${f.decision} ${f.from} -> ${f.to} rec_rev=${f.recRev} rec_hash=${f.recHash}`;
    case 'released':
      return `RELEASED: ${f.attempt} phase=${f.phase} voice=${f.voice} freed=${usd(f.freedUsd)}`;
    case 'exported':
      return `EXPORTED: run=${f.run} files=${f.files} run_json=${f.runJson}`;
    case 'artifact_valid':
      return `ARTIFACT_VALID: run=${f.run} status=${f.status}${f.attested > 0 ? ` attested=${f.attested}` : ''}`;
    case 'checkpoint':
      return `CHECKPOINT: gen=${f.generation} seq=${f.seq} ${f.dir === null ? 'already' : `dir=${f.dir}`}`;
    case 'checkpoint_failed':
      return `CHECKPOINT: failed ${f.detail.replace(/\s+/g, ' ')}`;
    case 'trail_failed':
      return `TRAIL: failed ${f.detail.replace(/\s+/g, ' ')}`;
  }
}

function estimateLine(f: Extract<ReportFact, { fact: 'estimate' }>): string {
  if (!f.durable) return 'ESTIMATE: skipped (state root is ephemeral; set LANEWARD_STATE_ROOT)';
  if (f.phases.every((p) => p.seconds === null)) return 'ESTIMATE: no history';
  const parts = f.phases.map((p) => `${p.phase}=${p.seconds === null ? '?' : `${Math.round(p.seconds)}s`}`);
  const total = f.phases.reduce<number>((sum, p) => sum + (p.seconds ?? 0), 0);
  return `ESTIMATE: ${parts.join(' ')} total=${Math.round(total)}s (medians of the last ${f.history} runs per phase)`;
}

function yn(value: boolean): string {
  return value ? 'yes' : 'no';
}
