import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { basename, extname, join, resolve } from 'node:path';
import { LanewardError } from '../../formats/codes/error.ts';
import { detectScope, type PlanScope } from '../../formats/review/plan-scope.ts';
import { commit, settleCommand } from './commit.ts';
import type { Command } from './core/machine.ts';
import { exportRun } from './export.ts';
import { runDirOf } from './locate.ts';
import { currentPlanSha, readPlanFile, type PlanFile } from './plan-file.ts';
import { emptyReport, type PlanReport } from './report.ts';
import { BINDING_FILE, publishBinding, readBinding, stateRootFor } from './run-binding.ts';
import type { PlanEnv } from './settings.ts';
import { openStateRoot } from './state-root.ts';
import { estimateFact } from './timing.ts';

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
export async function planNext(options: NextOptions, planEnv: PlanEnv): Promise<PlanReport> {
  const runDir = runDirOf(options.out, planEnv);
  const { settings } = planEnv;
  let binding = readBinding(runDir);
  let plan: PlanFile | undefined;
  let scope: PlanScope | undefined;
  if (binding === undefined || options.plan !== undefined) {
    if (options.plan === undefined) throw new LanewardError('USAGE', 'the first next of a run needs --plan <plan.md>');
    plan = readPlanFile(resolve(planEnv.cwd, options.plan));
    scope = detectScope(plan.text, { ...(options.ui === undefined ? {} : { ui: options.ui }), ...(options.dx === undefined ? {} : { dx: options.dx }) });
  }
  if (options.ceoOnly === true) {
    if (binding !== undefined) throw new LanewardError('CEO_ONLY_AFTER_INIT', `${runDir} already holds run ${binding.run}; --ceo-only goes on a run's first next`);
    if (options.ui === true || options.dx === true || /^<!--\s*laneward-scope:.*\b(ui|dx)=yes/i.test(plan!.text)) {
      throw new LanewardError('CEO_ONLY_CONFLICT', '--ceo-only reviews the CEO phase alone; it cannot take --ui, --developer-tool or a scope marker naming them');
    }
  }
  const store = openStateRoot(stateRootFor(settings.stateRoot, binding, planEnv.cwd));
  const first = binding === undefined;
  if (binding === undefined) {
    if (existsSync(join(runDir, 'run.json'))) {
      throw new LanewardError('RUN_NOT_INITIALIZED', `${runDir} holds a run.json that laneward did not start; use another --out`, { path: runDir });
    }
    binding = await publishBinding(runDir, { run: mintRunId(plan!.path), root: store.root });
  }
  const runId = binding.run;
  const report = emptyReport(runDir, runId);
  const existing = first ? undefined : store.runs.get(runId);
  // Read once, before the transaction: a carry is refused when the file changed, and the PLAN_CHANGED note says so.
  const planFileSha = existing === undefined ? null : currentPlanSha(existing.plan_source);
  let command: Command;
  if (existing !== undefined) command = { type: 'next', input: { planFileSha, ...pick(options, ['redispatch', 'ceoOnly']) } };
  else if (plan === undefined || scope === undefined) throw new LanewardError('RUN_NOT_INITIALIZED', `run ${runId} is not in state root ${store.root}`);
  else {
    const chosen = pick(options, ['ceoOnly', 'spendCap', 'estimateUsd', 'carryForward', 'roundCap', 'carryCheckCap']);
    command = { type: 'start', input: { run: runId, plan, scope, sessionKind: settings.session.kind, ...chosen } };
  }
  const record = await commit(store, runId, command, report).catch((error: unknown) => {
    // A refused first next leaves nothing behind: the binding goes unless a record holds it.
    if (first && store.runs.get(runId) === undefined) rmSync(join(runDir, BINDING_FILE), { force: true });
    throw error;
  });
  const located = { store, runDir };
  // A CEO-only run ends at its review: the run directory is written and validated now.
  if (record.state === 'reviewed') await exportRun(located, record, report, 'review');
  if (first) report.stateRoot = { path: store.root, durable: settings.durable };
  // The settings word it (escaped where read; test/plan-settings.test.ts pins that line).
  if (settings.session.note !== null && first) report.notes.push({ fact: 'session_kind_unknown', note: settings.session.note });
  if (first && scope !== undefined) {
    report.scope.push({ fact: 'scope', ui: scope.ui, uiWhy: scope.uiWhy, dx: scope.dx, dxWhy: scope.dxWhy, source: scope.source });
    if (scope.pin !== null) report.scope.push({ fact: 'scope_pin', pin: scope.pin, plan: plan!.path });
  }
  if (first) report.notes.push(estimateFact(store, record.order, record.run, settings.durable));
  const sha = first ? currentPlanSha(record.plan_source) : planFileSha;
  if (sha !== null && sha !== record.plan_sha256) report.notes.push({ fact: 'plan_changed', since: 'review', source: record.plan_source, sha256: sha, reviewed: record.plan_sha256 });
  return settleCommand(located, record, planEnv, report, { open: true, files: record.state !== 'reviewed' });
}

/** `<plan stem>-<yyyymmdd>-<6 hex>`. */
export function mintRunId(planPath: string): string {
  const stem = basename(planPath, extname(planPath)).toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 48) || 'plan';
  const day = new Date().toISOString().slice(0, 10).replaceAll('-', '');
  return `${stem}-${day}-${randomBytes(3).toString('hex')}`;
}


/** The named options that are set, for inputs that take them as optional fields. */
function pick<T extends object, K extends keyof T>(from: T, keys: readonly K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const key of keys) if (from[key] !== undefined) out[key] = from[key];
  return out;
}
