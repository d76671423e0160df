import { statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { LaneProgress } from '../../formats/crew/record.ts';
import { LanewardError, toError } from '../../formats/codes/error.ts';
import { createPoolDispatcher, type Dispatcher } from '../dispatch/dispatcher.ts';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import { openStore, type Store } from '../store/store.ts';
import { runLanes, summaryLine, tally, type CrewTally } from './coordinator.ts';
import { verifyCrewActions } from './crew-actions.ts';
import { CrewView, DEFAULT_STUCK_AFTER_S, percentile } from '../console/view-state.ts';
import { crewRunRecord } from '../console/crew-run-record.ts';
import { answerAdvice, resumeAdvice, retryAdvice } from './retry-advice.ts';
import { laneLine, laneObject } from './lane-line.ts';
import { laneOfSpec } from '../console/lane-of-spec.ts';
import { reviewLedger } from '../console/review-spend.ts';
import { cachedCallCodes, laneCallCodes } from '../console/call-codes.ts';
import { CrewSpend } from './crew-spend.ts';
import { laneCost } from './lane-cost.ts';
import { costOf } from '../providers/cost.ts';
import { refusedOutcome } from '../../workers/supervise/outcome.ts';
import { readLaneStory } from '../console/lane-story.ts';
import { startTerminalView, type TerminalOutput, type TerminalView } from '../console/terminal-view.ts';
import { claimCrew } from './crew-driver.ts';
import { claimOut } from './out-claim.ts';
import type { CrewActions } from './crew-actions.ts';
import { loadCrew, type LoadedCrew } from './load-crew.ts';
import { checkRunners } from './resolve-runners.ts';
import { qaConfigFromEnv, type QaConfig } from '../qa/qa-config.ts';
import { startQaService, type QaService } from './qa-client.ts';
import type { CrewServer } from '../console/serve.ts';
import { crewReviewPort } from './review-port.ts';
import { sweepOrphans } from './orphan-sweep.ts';
import { RateLimitPause } from '../providers/rate-limit-pause.ts';
import { workspacePort } from './workspace-port.ts';
import { abortSignalName, cancelledBeforeStart } from '../dispatch/cancelled.ts';
import { configuredStateRoot, defaultStateRoot, readPlanEnv, type PlanEnv } from '../plan/index.ts';

export interface CrewRunOptions {
  readonly file: string;
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly state: string | undefined;
  readonly threads: number;
  readonly deadlineMs: number | undefined;
  readonly serve: number | undefined;
  readonly report: string | undefined;
  readonly json: boolean;
  /** Failed lanes run again, as new attempts (crew run --retry-failed). */
  readonly retryFailed?: boolean;
  /** Signals and a closed stdout, as one abort. */
  readonly cancel: AbortSignal;
  /** Seconds without a sign of life after which the views call a running lane stuck. */
  readonly stuckAfterS?: number;
  /** How long the crew waits for the owner's answers once only lanes parked at their gates are left (crew run --owner-wait). */
  readonly ownerWaitMs?: number;
  /** Hears every saved change of a lane (a queue worker forwards them to its coordinator). */
  readonly onLane?: (progress: LaneProgress) => void;
  /**
   * Awaited once a child's slot is granted and its caller journaled the dispatch, before
   * the child starts (a queue worker mirrors the lane's journal here); a throw starts nothing.
   */
  readonly beforeChild?: (lane: string | undefined) => Promise<void>;
}

/** Where a crew prints: lines on stdout, its live view and notes on stderr (the CLI's Io is one). */
export interface CrewOutput extends TerminalOutput {
  out(line: string): void;
  err(line: string): void;
  errRaw(data: string): void;
  readonly stderrIsTTY: boolean;
}

export interface CrewRunResult {
  readonly tally: CrewTally;
  readonly lanes: readonly LaneProgress[];
  /** Why the crew stopped early: 'deadline', a signal name, or null. */
  readonly stoppedBy: string | null;
  readonly summary: string;
}

const LIVE_MS = 250;

/**
 * `crew run`: every lane of a crew file through its review run and its QA lifecycle, on
 * one state root, with one dispatcher bounding every child the crew starts and one QA
 * service thread holding the lanes' QA state machines. Started again on the same state
 * root, it resumes each lane where it stopped.
 */
export async function crewRun(options: CrewRunOptions, io: CrewOutput): Promise<CrewRunResult> {
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const read = loadCrew(options.file, options.cwd);
  const loaded = { ...read, lanes: checkRunners(read.file, read.lanes, options.cwd, options.env) };
  const actions = verifyCrewActions(loaded);
  // The state root is resolved as every plan command resolves it (an empty value names none).
  const root = configuredStateRoot(options.state, options.env, options.cwd)?.path ?? defaultStateRoot(options.cwd);
  // Plan settings are read once, here, for every lane; the lanes' runs live in this root.
  const planEnv = readPlanEnv(options.env, options.cwd, root);
  const store = openStore(root, { batched: true });
  const { crew } = loaded;
  // A bad knob is a usage error before any lane starts, not 50 lane failures.
  const qaConfig = qaConfigFromEnv(options.env);
  if (options.report !== undefined) checkReportPath(resolve(options.cwd, options.report));
  const release = await claimCrew(store, crew.crew);
  try {
    // Another crew running in the same out would drive the same run directories.
    const releaseOut = claimOut(loaded.out, crew.crew, loaded.file);
    try {
      return await runClaimed(options, io, { loaded, actions, root, planEnv, store, qaConfig, started, startedAt });
    } finally {
      releaseOut();
    }
  } finally {
    await release();
  }
}

async function runClaimed(
  options: CrewRunOptions,
  io: CrewOutput,
  claimed: { loaded: LoadedCrew; actions: CrewActions; root: string; planEnv: PlanEnv; store: Store; qaConfig: QaConfig; started: number; startedAt: string },
): Promise<CrewRunResult> {
  const { loaded, actions, root, planEnv, store, qaConfig, started, startedAt } = claimed;
  const { crew } = loaded;

  const runFacts = {
    crew: crew.crew,
    file: loaded.file,
    startedAt,
    retryCommand: retryAdvice(loaded.file, root),
    capUsd: crew.limits.spend_cap_usd ?? null,
    reserveUsd: crew.limits.reserve_usd,
    stuckAfterS: options.stuckAfterS ?? DEFAULT_STUCK_AFTER_S,
  };
  // One cap over every call of every lane; what earlier runs of the crew spent counts too.
  const ledger = reviewLedger(store);
  const spend = new CrewSpend(runFacts.capUsd, runFacts.reserveUsd, spentBefore(store, crew.crew, loaded.lanes.map((l) => l.id)));
  await store.crewRuns.put(crew.crew, crewRunRecord(runFacts, null, null));
  const stop = new AbortController();
  let stoppedBy: string | null = null;
  const onCancel = () => {
    stoppedBy ??= typeof options.cancel.reason === 'string' ? options.cancel.reason : 'SIGTERM';
    stop.abort(stoppedBy);
  };
  if (options.cancel.aborted) onCancel();
  options.cancel.addEventListener('abort', onCancel, { once: true });
  const deadline =
    options.deadlineMs === undefined
      ? undefined
      : setTimeout(() => {
          stoppedBy ??= 'deadline';
          stop.abort('SIGTERM');
        }, options.deadlineMs);

  // Everything started from here is torn down in the finally, whichever start failed.
  let dispatcher: Dispatcher | undefined;
  let qa: QaService | undefined;
  let server: CrewServer | undefined;
  let live: TerminalView | undefined;
  let refresh: NodeJS.Timeout | undefined;
  let view: CrewView | undefined;
  let lanes: LaneProgress[] = [];
  let ran = false;
  // The QA thread boots while the pool starts and the orphans are swept (it starts no
  // child before a lane calls it, and no lane runs before the sweep is done): its start
  // is most of a crew's fixed cost. Closed in the finally whichever start failed.
  let pool: Dispatcher | undefined;
  const poolRun: Dispatcher['supervise'] = (spec, runOptions) => {
    if (pool === undefined) throw new Error('the crew dispatcher is not started');
    return pool.supervise(spec, runOptions);
  };
  // Every child's budget runs from its slot: a lane waiting behind the limit is not late.
  // A preset's call first passes its provider's gate: after a rate limit no new call of
  // that provider starts (nor is journaled as dispatched) until its retry-after passed.
  const pause = new RateLimitPause();
  const supervise: Dispatcher['supervise'] = async (spec, runOptions) => {
    // Under the crew's cap a call first holds its reservation; it is settled at the call's
    // real cost (or counted at the reservation when that stays unknown) once it ended.
    const hold = await spend.admit(stop.signal, { running: spec.adopt !== undefined });
    if (hold === 'cancelled') return cancelledBeforeStart(spec, abortSignalName(stop.signal));
    if (hold === 'refused') return refusedOutcome('SPEND_CAP_EXCEEDED', spec.action, spec.startedAt);
    let cost: number | null = null;
    try {
      const outcome = await gatedRun(spec, runOptions);
      // Nothing went out to a model from a call that never started: it cost nothing.
      cost = !outcome.providerStarted ? 0 : runOptions?.charge !== undefined ? runOptions.charge(outcome) : costOf(outcome.provider, spec.model ?? null, crew.prices);
      return outcome;
    } finally {
      hold.settle(cost);
    }
  };
  const gatedRun: Dispatcher['supervise'] = async (spec, runOptions) => {
    const provider = spec.provider;
    if (provider !== undefined && !(await pause.admit(provider, stop.signal))) return cancelledBeforeStart(spec, abortSignalName(stop.signal));
    // Admitted marks are the lane's sign of life: a lane without them for minutes is stuck.
    const lane = laneOfSpec(spec, crew.crew, loaded.out);
    const onMarks = lane === undefined ? undefined : () => view?.activity(lane);
    // The caller's own step at the slot first (a dispatch journaled), then the crew's (a queue worker mirrors it).
    // At its slot a preset call first waits out a rate limit that came while it queued:
    // nothing of that provider goes out (nor is journaled as dispatched) inside a pause.
    const before = options.beforeChild;
    const onSlot = async () => {
      // Cancelled while it waited: nothing is journaled; the dispatcher, seeing the cancel, starts nothing.
      if (provider !== undefined && !(await pause.beforeStart(provider, stop.signal))) return;
      await runOptions?.onSlot?.();
      // A limit that came while the dispatch was being journaled is waited out too, before the spawn.
      if (provider !== undefined && !(await pause.beforeStart(provider, stop.signal))) return;
      await before?.(lane);
    };
    const outcome = await poolRun(spec, { ...runOptions, cancel: stop.signal, budgetFromSlot: true, onSlot, ...(onMarks === undefined ? {} : { onMarks }) });
    if (provider !== undefined) pause.ended(provider, outcome);
    return outcome;
  };
  const qaStarting = startQaService(root, supervise, qaConfig, {
    actionsFile: loaded.actionsFile,
    trust: loaded.trustFile,
    action: crew.actions.observer,
    timeoutMs: crew.limits.timeout_ms,
    ...(crew.prices === undefined ? {} : { prices: crew.prices }),
  });
  // Settled here too: a pool that failed to start must not leave this an unhandled rejection.
  qaStarting.catch(() => undefined);
  try {
    pool = dispatcher = await createPoolDispatcher({ threads: options.threads, limit: crew.limits.concurrency });
    // A crew that died left children running: each is adopted or torn down before any
    // lane starts a child of its own.
    const orphans = await sweepOrphans({ crew: crew.crew, lanes: loaded.lanes, store, planEnv, actions, supervise, limit: crew.limits.concurrency, cancel: stop.signal });
    qa = await qaStarting;
    const dispatching = pool;
    const shown = (view = new CrewView(crew.crew, () => dispatching.stats(), loaded.lanes.map((l) => l.id), () => pause.view(), {
      startedAt,
      capUsd: runFacts.capUsd,
      reserveUsd: runFacts.reserveUsd,
      stuckAfterS: runFacts.stuckAfterS,
      retryCommand: runFacts.retryCommand,
      resumeCommand: resumeAdvice(loaded.file, root),
      review: ledger,
      callCodes: cachedCallCodes(store),
      // No diff stat here: git would run on the crew's own event loop (crew view asks for it).
      laneStory: (id) => readLaneStory(store, { crew: crew.crew, lane: id, retryCommand: runFacts.retryCommand, resumeCommand: resumeAdvice(loaded.file, root), answerCommand: answerAdvice(loaded.file, root, id), callTimeoutMs: crew.limits.timeout_ms, runDir: join(loaded.out, id) }),
    }));
    if (options.serve !== undefined) {
      const port = options.serve;
      const { LANE_PAGE } = await import('../console/lane-page-route.ts');
      server = await (await import('../console/serve.ts')).serveCrew(port, shown, { lanePage: LANE_PAGE }).catch((error: unknown) => {
        throw new LanewardError('USAGE', `--serve ${port}: ${toError(error).message}`, { path: '--serve' });
      });
    }
    if (server !== undefined) io.err(`CREW_VIEW: ${server.url}`);
    // On a terminal the crew's live region sits under the lines printed as lanes end.
    live = io.stderrIsTTY ? startTerminalView(io, shown, LIVE_MS) : undefined;
    const region = live;
    const print = (line: string) => (region === undefined ? io.out(line) : region.print(() => io.out(line)));
    refresh = server === undefined ? undefined : setInterval(() => shown.changed(), 1_000);
    lanes = await runLanes(
      {
        crew: crew.crew,
        out: loaded.out,
        lanes: loaded.lanes,
        lanesAtOnce: crew.limits.lanes ?? crew.limits.concurrency,
        agentTurns: crew.limits.agent_turns,
        retryFailed: options.retryFailed === true,
        ownerWaitMs: options.ownerWaitMs ?? 0,
      },
      {
        store,
        actions,
        qa,
        supervise,
        orphans,
        review: crewReviewPort({ crew: loaded, actions, planEnv, supervise, cancel: stop.signal, orphans }),
        ...(crew.prices === undefined ? {} : { prices: crew.prices }),
        ...(loaded.workspace === null ? {} : { workspace: workspacePort(loaded.workspace, crew.crew, loaded.out, { maxFileBytes: crew.limits.max_file_bytes, maxTurnBytes: crew.limits.max_turn_bytes }) }),
      },
      {
        cancel: stop.signal,
        onChange: (progress) => {
          shown.update(progress);
          options.onLane?.(progress);
        },
        onLaneEnd: (progress) => {
          const facts = { cost: laneCost(progress, ledger(progress)), calls: laneCallCodes(store, progress) };
          print(options.json ? JSON.stringify(laneObject(progress, facts)) : laneLine(progress, runFacts.retryCommand, { ...facts, resume: resumeAdvice(loaded.file, root), answer: answerAdvice(loaded.file, root, progress.lane) }));
        },
      },
    );
    ran = true;
  } finally {
    if (deadline !== undefined) clearTimeout(deadline);
    // A crew that ran draws its final region below; one that failed leaves none before its error.
    if (ran) live?.stop();
    else live?.close(false);
    if (refresh !== undefined) clearInterval(refresh);
    options.cancel.removeEventListener('abort', onCancel);
    // A QA thread whose start was still under way when another start failed is closed too.
    await (qa ?? (await qaStarting.catch(() => undefined)))?.close();
    await dispatcher?.close();
    // A start that failed leaves no server behind (a served crew closes it below, after its summary).
    if (!ran) await server?.close();
  }
  const stats = dispatcher.stats();
  const durationS = (performance.now() - started) / 1000;
  const counts = tally(lanes, loaded.lanes.length);
  const summary = summaryLine(counts, stats.started, durationS);
  view.finish(summary);
  // The console of a finished crew, read from the store, shows what this view shows now.
  await store.crewRuns.put(crew.crew, crewRunRecord(runFacts, view.snapshot(), stoppedBy));
  live?.close(true);
  if (options.report !== undefined) {
    const report = {
      schema_version: 1,
      crew: crew.crew,
      file: loaded.file,
      state_root: root,
      started_at: startedAt,
      ended_at: new Date().toISOString(),
      duration_s: Number(durationS.toFixed(3)),
      stopped_by: stoppedBy,
      summary: { ...counts, attempts: stats.started },
      stats: { marks: stats.marks, renewal_p99_ms: percentile(stats.renewalLatencyMs, 0.99) },
      lanes: lanes.map((progress) => laneObject(progress, { cost: laneCost(progress, ledger(progress)), calls: laneCallCodes(store, progress) })),
      // Providers that rate limited the crew, and until when their latest pause ran.
      providers: pause.report(),
    };
    writeFileAtomic(resolve(options.cwd, options.report), `${JSON.stringify(report, null, 2)}\n`, 0o644, true);
  }
  // Lanes waiting for their owner: the command that answers them follows the summary.
  const answer = counts.waiting > 0 ? answerAdvice(loaded.file, root, null) : null;
  if (options.json) io.out(JSON.stringify({ summary: { ...counts, attempts: stats.started, duration_s: Number(durationS.toFixed(3)), stopped_by: stoppedBy, ...(answer === null ? {} : { answer_command: answer }) } }));
  else io.out(answer === null ? summary : `${summary}\nCREW_ANSWER: ${answer}`);
  if (server !== undefined) {
    // Events coalesce to ten a second: the done snapshot reaches open pages before the server closes.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await server.close();
  }
  return { tally: counts, lanes, stoppedBy, summary };
}

/** A report path that cannot be written is refused before the crew runs, not after its work. */
function checkReportPath(file: string): void {
  if (statSync(file, { throwIfNoEntry: false })?.isDirectory() === true) throw new LanewardError('USAGE', `--report ${file} is a directory`, { path: file });
  if (statSync(dirname(file), { throwIfNoEntry: false })?.isDirectory() !== true) throw new LanewardError('USAGE', `--report ${file}: its directory does not exist`, { path: file });
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
