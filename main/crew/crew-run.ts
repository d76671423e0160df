import { join, resolve } from 'node:path';
import type { LaneProgress } from '../../formats/crew/record.ts';
import { createPoolDispatcher, type Dispatcher } from '../dispatch/dispatcher.ts';
import type { Store } from '../store/store.ts';
import { runLanes } from './coordinator.ts';
import { verifyCrewActions } from './crew-actions.ts';
import { answerAdvice, resumeAdvice, resumeArgv, retryAdvice, retryArgv } from './retry-advice.ts';
import { laneOfSpec } from '../console/lane-of-spec.ts';
import { reviewLedger } from '../console/review-spend.ts';
import { cachedCallCodes, laneCallCodes } from '../console/call-codes.ts';
import { readLaneStory } from '../console/lane-story.ts';
import { CrewSpend } from './crew-spend.ts';
import { laneCost } from './lane-cost.ts';
import { checkRunners } from './resolve-runners.ts';
import { qaConfigFromEnv } from '../qa/qa-config.ts';
import { startQaService, type QaService } from './qa-client.ts';
import { crewReviewPort } from './review-port.ts';
import { sweepOrphans, type OrphanSettlements } from './orphan-sweep.ts';
import { RateLimitPause } from '../providers/rate-limit-pause.ts';
import { workspacePort } from './workspace-port.ts';
import { landPort } from './land-port.ts';
import type { LandEvent } from '../../formats/crew/land-lines.ts';
import { pregateChecks } from '../../formats/crew/pregate-checks.ts';
import type { LandPort, WorkspacePort } from './lane-context.ts';
import { readPlanEnv } from '../plan/index.ts';
import { crewSupervise } from './crew-supervise.ts';
import { runCrewSession, type CrewOutput, type CrewRunOptions, type CrewRunResult, type CrewSession, type LaneRunner } from './crew-session.ts';
import type { LoadedCrew } from './load-crew.ts';
import { LaneCancels } from './lane-cancels.ts';
import { laneControlPort } from './lane-control-port.ts';
import { crewHasContainable, crewSandbox, sandboxFor } from '../sandbox/crew-sandbox.ts';

export type { CrewOutput, CrewRunOptions, CrewRunResult } from './crew-session.ts';

/**
 * `crew run`: every lane of a crew file through its review run and its QA lifecycle, on
 * one state root, with one dispatcher bounding every child the crew starts and one QA
 * service thread holding the lanes' QA state machines. Started again on the same state
 * root, it resumes each lane where it stopped.
 */
export async function crewRun(options: CrewRunOptions, io: CrewOutput): Promise<CrewRunResult> {
  return runCrewSession(options, io, (read, root) => {
    const loaded = { ...read, lanes: checkRunners(read.file, read.lanes, options.cwd, options.env) };
    return { loaded, runner: localLanes(loaded, root, options, io) };
  });
}

/** The lanes of a crew run in this process: one dispatcher, one QA thread, the orphans of a crew that died swept first. */
function localLanes(loaded: LoadedCrew, root: string, options: CrewRunOptions, io: CrewOutput): LaneRunner {
  const { crew } = loaded;
  const actions = verifyCrewActions(loaded);
  // Probed once, before any lane starts: `required` without it refuses the crew here.
  const sandbox = crewHasContainable(loaded) ? sandboxFor(crew.sandbox, options.env, loaded.file) : null;
  // A bad knob is a usage error before any lane starts, not 50 lane failures.
  const qaConfig = qaConfigFromEnv(options.env);
  // Plan settings are read once, here, for every lane; the lanes' runs live in this root.
  const planEnv = readPlanEnv(options.env, options.cwd, root);
  // A preset's call first passes its provider's pause: after a rate limit no new call of
  // that provider starts (nor is journaled as dispatched) until its retry-after passed.
  const pause = new RateLimitPause();
  let dispatcher: Dispatcher | undefined;
  let qaStarting: Promise<QaService> | undefined;
  let qa: QaService | undefined;
  let orphans: OrphanSettlements | undefined;
  let ledger: ReturnType<typeof reviewLedger> | undefined;
  let store: Store | undefined;
  // The crew's supervise function, once start() made it; runLanes() hands it to the lanes.
  let supervising: Dispatcher['supervise'] | undefined;
  const facts = (progress: LaneProgress) => ({ cost: laneCost(progress, ledger!(progress)), calls: laneCallCodes(store!, progress) });
  // Operators' cancels per lane (made at start, under the crew's stop) and the lane requests they serve.
  let cancels: LaneCancels | undefined;
  const laneControl = laneControlPort((lane) => store?.crewLanes.get([crew.crew, lane]), loaded.lanes, () => cancels);
  return {
    retryArgv: retryArgv(loaded.file, root, options.rehearse?.args),
    resumeArgv: resumeArgv(loaded.file, root, options.rehearse?.args),
    reportWhere: {},
    laneControl,
    async start(session) {
      store = session.store;
      // The crew's first word on stderr: whether its agents are contained, and why not.
      if (sandbox !== null) io.event({ type: 'sandbox', state: sandbox });
      const stop = session.stop.signal;
      cancels = new LaneCancels(stop);
      // One cap over every call of every lane; what earlier runs of the crew spent counts too.
      ledger = reviewLedger(store);
      const spend = new CrewSpend(crew.limits.spend_cap_usd ?? null, crew.limits.reserve_usd, spentBefore(store, crew.crew, loaded.lanes.map((l) => l.id)));
      const dispatch: Dispatcher['supervise'] = (spec, runOptions) => {
        if (dispatcher === undefined) throw new Error('the crew dispatcher is not started');
        return dispatcher.supervise(spec, runOptions);
      };
      const supervise = (supervising = crewSupervise({
        dispatch,
        spend,
        prices: crew.prices,
        pause,
        stop,
        laneOf: (spec) => laneOfSpec(spec, crew.crew, loaded.out),
        activity: (lane) => session.view?.activity(lane),
        beforeChild: options.beforeChild,
        cancels,
      }));
      // The QA thread boots while the pool starts and the orphans are swept (it starts no
      // child before a lane calls it, and no lane runs before the sweep is done): its start
      // is most of a crew's fixed cost. Closed in close() whichever start failed.
      const observer = {
        actionsFile: loaded.actionsFile,
        trust: loaded.trustFile,
        action: crew.actions.observer,
        timeoutMs: crew.limits.timeout_ms,
        ...(crew.prices === undefined ? {} : { prices: crew.prices }),
      };
      // A thread of another state root holds other lanes' QA: never this crew's.
      const shared = options.qa !== undefined && resolve(options.qa.root) === resolve(root) ? options.qa : undefined;
      qaStarting = shared !== undefined ? shared.tenant(supervise, qaConfig, observer) : startQaService(root, supervise, qaConfig, observer);
      // Settled here too: a pool that failed to start must not leave this an unhandled rejection.
      qaStarting.catch(() => undefined);
      const pool = (dispatcher = options.pool !== undefined ? options.pool.dispatcher(crew.limits.concurrency) : await createPoolDispatcher({ threads: options.threads, limit: crew.limits.concurrency }));
      // A crew that died left children running: each is adopted or torn down before any
      // lane starts a child of its own.
      orphans = await sweepOrphans({ crew: crew.crew, lanes: loaded.lanes, store, planEnv, actions, supervise, limit: crew.limits.concurrency, cancel: stop });
      qa = await qaStarting;
      const resume = resumeAdvice(loaded.file, root, options.rehearse?.args);
      const retry = retryAdvice(loaded.file, root, options.rehearse?.args);
      const held = store;
      return {
        stats: () => pool.stats(),
        providers: () => pause.view(),
        review: ledger,
        callCodes: cachedCallCodes(store),
        // No diff stat here: git would run on the crew's own event loop (crew view asks for it).
        laneStory: (id) => readLaneStory(held, { crew: crew.crew, lane: id, retryCommand: retry, resumeCommand: resume, answerCommand: answerAdvice(loaded.file, root, id), callTimeoutMs: crew.limits.timeout_ms, runDir: join(loaded.out, id) }),
      };
    },
    runLanes(session: CrewSession) {
      const supervise = supervising!;
      const stop = session.stop.signal;
      // Said before any lane starts: which lanes wait for which, and for what files.
      for (const event of loaded.order?.events ?? []) {
        session.view?.laneOrder(event);
        session.land(event);
      }
      return runLanes(
        {
          crew: crew.crew,
          out: loaded.out,
          lanes: loaded.lanes,
          lanesAtOnce: crew.limits.lanes ?? crew.limits.concurrency,
          agentTurns: crew.limits.agent_turns,
          ownerWaitMs: options.ownerWaitMs ?? 0,
          retryFailed: options.retryFailed === true,
          ...(loaded.order === null ? {} : { conflicts: loaded.order.conflicts }),
        },
        {
          store: session.store,
          actions,
          qa: qa!,
          supervise,
          ...(orphans === undefined ? {} : { orphans }),
          review: crewReviewPort({ crew: loaded, actions, planEnv, supervise, cancel: stop, ...(cancels === undefined ? {} : { laneCancel: (lane: string) => cancels!.signal(lane) }), stopDetail: io.words.stop, ...(orphans === undefined ? {} : { orphans }) }),
          ...(crew.prices === undefined ? {} : { prices: crew.prices }),
          ...(cancels === undefined ? {} : { cancels }),
          ...laneWorkspace(loaded, session.runId, stop, (progress) => laneCost(progress, ledger!(progress)).usd, (event) => session.land(event)),
          ...(sandbox === null ? {} : { sandbox: crewSandbox(loaded, sandbox, crew.crew, session.runId)! }),
        },
        { cancel: stop, onChange: (progress) => session.laneChanged(progress), onLaneEnd: (progress) => session.laneEnded(progress), bind: (handle) => laneControl.bind(handle) },
      );
    },
    laneFacts: facts,
    attempts: () => dispatcher!.stats().started,
    stats: () => dispatcher!.stats(),
    providers: () => pause.report(),
    async close() {
      // A QA thread whose start was still under way when another start failed is closed too.
      await (qa ?? (await qaStarting?.catch(() => undefined)))?.close();
      await dispatcher?.close();
    },
  };
}

/** What the crew's lanes spent in its earlier runs, and their calls of unknown cost, from the store. */
function spentBefore(store: Store, crew: string, lanes: readonly string[]): { spentUsd: number; unpriced: number } {
  const ledger = reviewLedger(store);
  let spentUsd = 0;
  let unpriced = 0;
  for (const lane of lanes) {
    const progress = store.crewLanes.get([crew, lane]);
    if (progress === undefined) continue;
    const cost = laneCost(progress, ledger(progress));
    spentUsd += cost.usd;
    unpriced += cost.unpriced;
  }
  return { spentUsd, unpriced };
}

/** The lanes' workspace port and, for a crew file with a `pregate`, its land port (none without a workspace). */
function laneWorkspace(loaded: LoadedCrew, runId: string, cancel: AbortSignal, spentUsd: (progress: LaneProgress) => number, onEvent: (event: LandEvent) => void): { workspace?: WorkspacePort; land?: LandPort } {
  const { crew } = loaded;
  if (loaded.workspace === null) return {};
  const workspace = workspacePort(loaded.workspace, crew.crew, runId, loaded.out, { maxFileBytes: crew.limits.max_file_bytes, maxTurnBytes: crew.limits.max_turn_bytes });
  if (crew.pregate === undefined) return { workspace };
  const checks = pregateChecks(crew.pregate, crew.limits.timeout_ms);
  return { workspace, land: landPort({ crew: crew.crew, crewRun: runId, workspace: loaded.workspace, port: workspace, checks, cancel, spentUsd, onEvent }) };
}
