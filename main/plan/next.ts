import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { basename, extname, join, resolve } from 'node:path';
import { LanewardError } from '../../formats/error.ts';
import { sha256 } from '../../formats/plan-doc.ts';
import { detectScope, type PlanScope } from '../../formats/plan-scope.ts';
import type { JournalEvent, PhaseId, RunRecord } from '../../formats/review-run.ts';
import { transact, type Store } from '../store/store.ts';
import { openStateRoot } from './state-root.ts';
import { allFindings, attemptOf, emptyPhase, mintAttempt, nextPhase, openPhase, phaseOf, writeGate, type Step } from './machine.ts';
import { recordChoice, settleGate } from './answer.ts';
import { tryCarry } from './carry.ts';
import { startCheck } from './carry-check.ts';
import { currentPlanSha, readPlanFile, type PlanFile } from './plan-file.ts';
import { durable, runDirOf, type PlanEnv } from './locate.ts';
import { checkpointAfter } from './checkpoint.ts';
import { describeRun } from './describe.ts';
import { emptyReport, terminalStatus, type PlanReport } from './report.ts';
import { BINDING_FILE, publishBinding, readBinding, stateRootFor } from './run-binding.ts';
import { syncRunFiles } from './run-files.ts';
import { writeExport } from './export.ts';
import { cycleLine, estimateLine, phaseTimings } from './timing.ts';
import { sessionKind } from './session.ts';
import { admit, newSpend, settle } from './spend.ts';

export interface NextOptions {
  readonly out: string | undefined;
  readonly plan?: string;
  readonly ui?: boolean;
  readonly dx?: boolean;
  readonly spendCap?: number;
  readonly estimateUsd?: number;
  readonly redispatch?: string;
  readonly ceoOnly?: boolean;
  /** `--no-carry-forward` on the first next: every gate goes to the owner. */
  readonly carryForward?: boolean;
  readonly roundCap?: number;
  readonly carryCheckCap?: number;
}

/**
 * `plan next`: starts the run on its first call, then moves it one step: reprints what
 * is open (and which attempts went out without a result), opens the next phase once one
 * closed, or writes the gate after the last. Idempotent while attempts are open.
 */
export async function planNext(options: NextOptions, penv: PlanEnv): Promise<PlanReport> {
  const runDir = runDirOf(options.out, penv);
  // Environment values are checked where they are read, before anything is written.
  const isDurable = durable(penv.env);
  let binding = readBinding(runDir);
  const session = sessionKind(penv.env);
  let plan: PlanFile | undefined;
  let scope: PlanScope | undefined;
  if (binding === undefined || options.plan !== undefined) {
    if (options.plan === undefined) throw new LanewardError('USAGE', 'the first next of a run needs --plan <plan.md>');
    plan = readPlanFile(resolve(penv.cwd, options.plan));
    scope = detectScope(plan.text, { ...(options.ui === undefined ? {} : { ui: options.ui }), ...(options.dx === undefined ? {} : { dx: options.dx }) });
  }
  if (options.ceoOnly === true) {
    if (binding !== undefined) throw new LanewardError('CEO_ONLY_AFTER_INIT', `${runDir} already holds run ${binding.run}; --ceo-only goes on a run's first next`);
    if (options.ui === true || options.dx === true || /^<!--\s*laneward-scope:.*\b(ui|dx)=yes/i.test(plan!.text)) {
      throw new LanewardError('CEO_ONLY_CONFLICT', '--ceo-only reviews the CEO phase alone; it cannot take --ui, --developer-tool or a scope marker naming them');
    }
  }
  const store = openStateRoot(stateRootFor(penv.state, penv.env, binding, penv.cwd));
  const first = binding === undefined;
  if (binding === undefined) {
    if (existsSync(join(runDir, 'run.json'))) {
      throw new LanewardError('RUN_NOT_INITIALIZED', `${runDir} holds a run.json that laneward did not start; use another --out`, { path: runDir });
    }
    binding = publishBinding(runDir, { run: mintRunId(plan!.path), root: store.root });
  }
  const runId = binding.run;
  const report = emptyReport(runDir, runId);
  const now = new Date().toISOString();
  const record = await transact(store, runId, (current) => {
    const events: JournalEvent[] = [];
    const step: Step = { now, events, findingsOf: (id) => store.blobs.get([runId, id])?.findings ?? [] };
    let run: RunRecord;
    if (current === undefined) {
      if (plan === undefined || scope === undefined) throw new LanewardError('RUN_NOT_INITIALIZED', `run ${runId} is not in state root ${store.root}`);
      run = newRun(runId, plan, scope, session.kind, options, now);
      if (options.carryForward === false) run.carry_forward = false;
      if (options.roundCap !== undefined) run.round_cap = options.roundCap;
      if (options.carryCheckCap !== undefined) run.carry_check_cap = options.carryCheckCap;
      events.push({ type: 'run_started', at: now, plan: plan.path, snapshot: plan.doc.snapshot, order: run.order, session_kind: session.kind });
      run.commands += 1;
      openPhase(run, run.order[0]!, step);
      return { change: { record: run, events }, result: run };
    }
    if (options.ceoOnly === true && !current.ceo_only) {
      throw new LanewardError('CEO_ONLY_AFTER_INIT', `run ${runId} is a full run; --ceo-only goes on a run's first next`);
    }
    run = current;
    run.commands += 1;
    const history = advance(run, options, step, report);
    run.updated_at = now;
    return { change: events.length === 0 ? null : { record: run, events, history }, result: run };
  }).catch((error: unknown) => {
    // A refused first next leaves nothing behind: the binding goes unless a record holds it.
    if (first && store.runs.get(runId) === undefined) rmSync(join(runDir, BINDING_FILE), { force: true });
    throw error;
  });
  syncRunFiles(store, record, runDir);
  // A CEO-only run ends at its review: the run directory is written and validated now.
  if (record.state === 'reviewed') writeExport(store, record, runDir, report);
  if (first) report.stateRoot = { path: store.root, durable: isDurable };
  if (session.note !== null && first) report.notes.push(session.note);
  if (first && scope !== undefined) {
    report.scope.push(`SCOPE: ui=${yn(scope.ui)} (${scope.uiWhy}) dx=${yn(scope.dx)} (${scope.dxWhy}) source=${scope.source}`);
    if (scope.pin !== null) report.scope.push(`SCOPE_PIN: add ${scope.pin} as the first line of ${plan!.path}`);
  }
  if (first) report.notes.push(estimateLine(store, record.order, record.run, isDurable));
  planChanged(record, report);
  checkpointAfter(store, record, runDir, penv.env, report.after);
  describeRun(record, runDir, report, { open: true });
  report.status = terminalStatus(record.state);
  return report;
}

/** Moves the run one step; returns the phase timings to keep when the last phase closed. */
function advance(run: RunRecord, options: NextOptions, step: Step, report: PlanReport): ReturnType<typeof phaseTimings> {
  if (run.amendments.length > 0 && run.state !== 'incomplete') {
    throw new LanewardError('PLAN_AMEND_PENDING', `${run.amendments.length} accepted plan change(s) wait to be incorporated: ${run.amendments.map((a) => a.decision).join(', ')}`);
  }
  if (options.redispatch !== undefined) redispatch(run, options.redispatch, step);
  if (run.state === 'awaiting_result' && run.current !== null) {
    const phase = phaseOf(run, run.current);
    for (const voice of ['native', 'outside'] as const) {
      // A released attempt leaves its voice without one: the parent asked for a fresh one.
      if (phase[voice].attempt === null && phase[voice].status === 'pending') mintAttempt(run, phase, voice, admit(run.spend, 1), step);
    }
    for (const attempt of Object.values(run.attempts)) {
      if (attempt.state === 'open' && attempt.minted_by < run.commands) {
        report.unknown.push({ attempt: attempt.id, phase: attempt.phase, voice: attempt.voice });
      }
    }
    return [];
  }
  if (run.state !== 'phase_closed') return [];
  const following = nextPhase(run);
  if (following !== null) {
    openPhase(run, following, step);
    return [];
  }
  if (run.ceo_only) {
    run.state = 'reviewed';
    run.current = null;
    step.events.push({ type: 'reviewed', at: step.now });
    const c = run.phases.ceo!.consensus!;
    report.after.push(`REVIEWED: run=${run.run} phase=ceo confirmed=${c.confirmed} new=${c.new} native_only=${c.native_only}`);
  } else {
    writeGate(run, step, recHash);
    const urgent = allFindings(run, step).filter((f) => f.urgent === true && isCurrent(run, f.attempt)).map((f) => f.id);
    const carry = tryCarry(run, urgent, step.now, step.events, report);
    if (carry === 'check') startCheck(run, step.now, step.events, report);
    if (carry === 'carried') {
      for (const item of run.gate!.items) recordChoice(run, item, run.gate!.answers[item.id]!.chosen, report);
      settleGate(run, run.gate!.answers['p1']!.chosen, step.now, step.events);
    }
  }
  report.after.push(cycleLine(run));
  return phaseTimings(run);
}

function redispatch(run: RunRecord, id: string, step: Step): void {
  const old = attemptOf(run, id);
  if (old === undefined) throw new LanewardError('ATTEMPT_MISMATCH', `no attempt ${id} in run ${run.run}`);
  // A native voice that failed (plan run records it; nothing retries it by itself) is
  // redispatched only here, by the parent's explicit choice: the phase cannot close without it.
  const failedNative = old.voice === 'native' && (old.state === 'failed' || old.state === 'unavailable');
  if ((old.state !== 'open' && !failedNative) || run.current !== old.phase || run.state !== 'awaiting_result' || phaseOf(run, old.phase)[old.voice].attempt !== id) {
    throw new LanewardError('PHASE_NOT_AWAITING', `attempt ${id} is ${old.state}; only an open attempt (or a failed native one) of the open phase can be redispatched`);
  }
  if (old.state === 'open') {
    // The call may have gone out: its reservation stays counted, as unknown spend.
    settle(run.spend, old, null);
    old.state = 'abandoned';
    step.events.push({ type: 'attempt_abandoned', at: step.now, attempt: id });
  }
  const phase = phaseOf(run, old.phase);
  mintAttempt(run, phase, old.voice, admit(run.spend, 1), step);
}

function newRun(id: string, plan: PlanFile, scope: PlanScope, kind: RunRecord['session_kind'], options: NextOptions, now: string): RunRecord {
  const order: PhaseId[] = options.ceoOnly === true ? ['ceo'] : ['ceo', ...(scope.ui ? (['design'] as const) : []), ...(scope.dx ? (['dx'] as const) : []), 'eng'];
  return {
    v: 1,
    run: id,
    created_at: now,
    updated_at: now,
    seq: 0,
    commands: 0,
    state: 'awaiting_result',
    session_kind: kind,
    plan_source: plan.path,
    plan_sha256: plan.sha256,
    plan_items: [...plan.doc.items],
    implementation: plan.doc.implementation,
    snapshot: plan.doc.snapshot,
    order,
    ceo_only: options.ceoOnly === true,
    carry_forward: true,
    scope: { ui: scope.ui, dx: scope.dx, source: scope.source },
    phases: Object.fromEntries(order.map((p) => [p, emptyPhase(p)])),
    current: null,
    attempts: {},
    next_attempt: 1,
    spend: newSpend(options.spendCap ?? null, options.estimateUsd ?? null),
    gate_rev: 0,
    gate: null,
    past_gates: [],
    amendments: [],
    deviations: [],
    export: null,
  };
}

/** `<plan stem>-<yyyymmdd>-<6 hex>`. */
export function mintRunId(planPath: string): string {
  const stem = basename(planPath, extname(planPath)).toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 48) || 'plan';
  const day = new Date().toISOString().slice(0, 10).replaceAll('-', '');
  return `${stem}-${day}-${randomBytes(3).toString('hex')}`;
}

/** The hash of the recommendations the owner is shown; a later `rec` is checked against it. */
export function recHash(items: unknown): string {
  const list = items as { id: string; recommended: string }[];
  return sha256(list.map((item) => `${item.id}:${item.recommended}`).join('\n')).slice(0, 16);
}

function planChanged(run: RunRecord, report: PlanReport): void {
  const now = currentPlanSha(run.plan_source);
  if (now !== null && now !== run.plan_sha256) {
    report.notes.push(`PLAN_CHANGED: ${run.plan_source} sha256=${now.slice(0, 12)} reviewed=${run.plan_sha256.slice(0, 12)}`);
  }
}

const yn = (value: boolean) => (value ? 'yes' : 'no');
export type { Store };

/** Whether the attempt is the bound result a phase currently stands on. */
function isCurrent(run: RunRecord, attempt: string): boolean {
  return run.order.some((id) => run.phases[id]?.native.attempt === attempt || run.phases[id]?.outside.attempt === attempt);
}
