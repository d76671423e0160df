import { isPresetRunner, type RunnerConfig } from '../../formats/providers/runner.ts';
import { parentPort, workerData } from 'node:worker_threads';
import * as Comlink from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { BUILD_ID } from '../../formats/build-id.ts';
import { isLanewardError, toError } from '../../formats/codes/error.ts';
import type { QaEvent } from '../../formats/qa/events.ts';
import { renderQaLine } from '../../formats/qa/lines.ts';
import type { SuperviseFn } from '../dispatch/dispatcher.ts';
import type { Outcome } from '../../workers/supervise/outcome.ts';
import type { SpawnedChild, SupervisionSpec } from '../../workers/supervise/spec.ts';
import { qaFinish, qaStart, qaStatus, qaStop, qaTurn, type QaConfig, type QaReport } from '../qa/index.ts';
import { openStore, type Store } from '../store/store.ts';
import type { QaStep } from './ports.ts';
import { stderrSuffix, type CallEvidence } from '../../formats/crew/record.ts';
import { costOf, type Prices } from '../providers/cost.ts';

/** How the crew's lanes call their observer: one action, one budget, for every lane. */
export interface ObserverSettings {
  readonly actionsFile: string;
  readonly trust: string;
  readonly action: string;
  readonly timeoutMs: number;
  /** USD per million tokens by model: an observer preset whose stream gives tokens but no cost is charged at them. */
  readonly prices?: Prices;
}

/**
 * How the service starts an observer child back in the coordinator: through its
 * dispatcher, with the spawn reported back here (a function crosses comlink only as an
 * argument of its own: the observer call journals its child from it).
 */
export type QaRun = (spec: SupervisionSpec, onSpawn?: (child: SpawnedChild) => Promise<void>) => Promise<Outcome>;

/**
 * The QA service's surface, as the coordinator calls it through comlink. One thread holds
 * the QA state of every lane of one state root; each crew using it is a tenant, with its
 * own supervise function, knobs and observer settings (a queue worker's lane jobs are
 * crews of their own, over the worker's one thread).
 */
export interface QaServiceApi {
  init(root: string): Promise<void>;
  open(tenant: number, run: QaRun, config: QaConfig, observer: ObserverSettings): Promise<void>;
  release(tenant: number): Promise<void>;
  start(tenant: number, lane: string, runner: RunnerConfig): Promise<QaStep>;
  turn(tenant: number, lane: string, role: 'user' | 'assistant', text: string, diff: boolean, key?: string): Promise<QaStep>;
  finish(tenant: number, lane: string): Promise<QaStep>;
  stop(tenant: number, lane: string): Promise<QaStep>;
}

const expected = (workerData as { buildId?: unknown } | undefined)?.buildId;
if (expected !== BUILD_ID) throw new Error(`qa-service is build ${BUILD_ID}, coordinator expects ${String(expected)}`);

let store: Store;

/** One crew over this thread: how its observer children start, its knobs, its observer. */
interface Tenant {
  // The coordinator's supervise function, proxied: every observer call goes through its dispatcher.
  readonly run: QaRun;
  readonly knobs: QaConfig;
  readonly observer: ObserverSettings;
}
const tenants = new Map<number, Tenant>();

function tenantOf(id: number): Tenant {
  const tenant = tenants.get(id);
  if (tenant === undefined) throw new Error(`no QA tenant ${id} on this thread`);
  return tenant;
}

/** Runs one QA function, counting the observer children it starts through the crew's dispatcher. */
async function step(id: number, body: (supervise: SuperviseFn, tenant: Tenant) => Promise<QaReport>): Promise<QaStep> {
  let attempts = 0;
  let usd = 0;
  let unpriced = 0;
  // The last call's end: a step that failed on it keeps its exit status and stderr's end.
  let last: Outcome | undefined;
  let tenant: Tenant;
  const supervise: SuperviseFn = async (spec, options) => {
    // Only plain data crosses back to the coordinator (a cancel does not: the crew's own
    // stop cancels its children), and the spawn's report, proxied.
    const onSpawn = options?.onSpawn;
    const outcome = await tenant.run(spec, onSpawn === undefined ? undefined : Comlink.proxy(async (child: SpawnedChild) => onSpawn(child)));
    last = outcome;
    // A lane counts the children that started, not those cancelled while they waited, and
    // is charged what they cost: an observer call is paid like any other.
    if (outcome.providerStarted) {
      attempts += 1;
      const cost = costOf(outcome.provider, spec.model ?? null, tenant.observer.prices);
      if (cost === null) unpriced += 1;
      else usd += cost;
    }
    return outcome;
  };
  try {
    tenant = tenantOf(id);
    const report = await body(supervise, tenant);
    const stepped = toStep(report, attempts);
    const call = stepped.ok ? null : failedCall(report, last);
    // The detail ends with the call's last stderr line, as an agent turn's does: the lane's line shows it last.
    return { ...stepped, usd, unpriced, ...(call === null ? {} : { call, detail: `${stepped.detail ?? stepped.code}${stderrSuffix(call)}` }) };
  } catch (error) {
    return { ok: false, code: isLanewardError(error) ? error.code : 'INTERNAL', detail: toError(error).message, attempts, guidance: null, lines: [], usd, unpriced };
  }
}

function toStep(report: QaReport, attempts: number): QaStep {
  const guidance = report.events.map(guidanceOf).findLast((g) => g !== null) ?? null;
  const failed = report.events.find((e) => e.type === 'observer_failed' || e.type === 'completion_refused');
  const detail = report.message !== '' ? report.message : failed === undefined ? null : 'detail' in failed ? failed.detail : failed.code;
  return { ok: report.code === null, code: report.code, detail: report.code === null ? null : detail, attempts, guidance, lines: report.events.map(renderQaLine) };
}

/**
 * The observer call a failed step ended on, when the call itself gave no usable verdict
 * (a bootstrap that answered `fail` is a verdict, not a failed call), with the exit status
 * or signal and the end of stderr its supervision kept; named as the lane's story names it.
 */
function failedCall(report: QaReport, outcome: Outcome | undefined): CallEvidence | null {
  if (outcome === undefined) return null;
  const failed = report.events.findLast((e) => (e.type === 'observer_failed' && e.code !== 'QA_BOOTSTRAP_FAILED') || (e.type === 'cross_check' && e.verdict === 'error'));
  if (failed === undefined || !('call' in failed)) return null;
  const code = 'code' in failed ? failed.code : null;
  return { call: `observer:${failed.call}`, code: code ?? outcome.code, exitCode: outcome.childExitCode, signal: outcome.signal, stderr: [...outcome.stderrTail] };
}

function guidanceOf(event: QaEvent): string | null {
  if ((event.type === 'update' || event.type === 'cross_check') && event.verdict !== 'pass') return event.guidance ?? event.note;
  return null;
}

const api: QaServiceApi = {
  async init(root) {
    // Batched: the lanes' QA commands of one event-loop turn share a commit.
    store = openStore(root, { batched: true });
  },
  async open(id, run, config, settings) {
    tenants.set(id, { run, knobs: config, observer: settings });
  },
  async release(id) {
    const tenant = tenants.get(id);
    tenants.delete(id);
    // The proxy's port, closed: a released tenant's supervise function is never called again.
    (tenant?.run as Partial<Comlink.Remote<QaRun>> | undefined)?.[Comlink.releaseProxy]?.();
  },
  start: (id, lane, runner) =>
    step(id, async (supervise, tenant) => {
      // A lane whose bootstrap already passed (a crew killed before it saved the stage) is left alone.
      const status = qaStatus(store, lane).status;
      if (status !== null && status.state === 'active' && status.ready) return { lane, code: null, message: '', events: [], status };
      const launcher = isPresetRunner(runner) ? { argv: [], preset: runner } : { argv: [...runner] };
      return qaStart(store, lane, { observer: { ...launcher, ...tenant.observer } }, supervise);
    }),
  turn: (id, lane, role, text, diff, key) => step(id, (supervise, tenant) => qaTurn(store, lane, { role, text, diff, config: tenant.knobs, ...(key === undefined ? {} : { key }) }, supervise)),
  // Resumed: a lane whose cross-check passed before its next stage was saved is left complete.
  finish: (id, lane) => step(id, (supervise) => qaFinish(store, lane, { resume: true }, supervise)),
  stop: (id, lane) => step(id, (supervise) => qaStop(store, lane, {}, supervise)),
};

Comlink.expose(api, nodeEndpoint(parentPort!));
