import { resolve } from 'node:path';
import type { LaneProgress } from '../../formats/crew/record.ts';
import { LanewardError, toError } from '../../formats/codes/error.ts';
import { commandLine } from '../../formats/text/command-line.ts';
import { openStore } from '../store/store.ts';
import { configuredStateRoot, defaultStateRoot } from '../plan/index.ts';
import { CrewView, DEFAULT_STUCK_AFTER_S } from '../console/view-state.ts';
import { crewRunRecord, runsNothing } from '../console/crew-run-record.ts';
import { crewRunId } from './crew-run-id.ts';
import { answerArgv } from './retry-advice.ts';
import { planTitles } from '../console/plan-titles.ts';
import { startTerminalView, type TerminalView } from '../console/terminal-view.ts';
import type { CrewServer } from '../console/serve.ts';
import { tally } from './coordinator.ts';
import { claimCrewRun } from './crew-claims.ts';
import type { CrewOutput } from './crew-output.ts';
import { checkReportPath, writeCrewReport } from './crew-report.ts';
import { crewLaneCheck } from './lane-check.ts';
import { trainSaid } from '../land/reopen.ts';
import { CrewStop } from './crew-stop.ts';
import { CrewControl } from './crew-control-apply.ts';
import { loadCrew, type LoadedCrew } from './load-crew.ts';
import type { CrewRunOptions, CrewRunResult, CrewSession, LaneRunner } from './crew-session-ports.ts';

export type { CrewOutput } from './crew-output.ts';
export type { CrewRunOptions, CrewRunResult, CrewSession, LaneFeed, LaneRunner } from './crew-session-ports.ts';

const LIVE_MS = 250;

/**
 * One crew run, however its lanes run: the crew file read and checked (the runner's own
 * checks in `prepare`), the report path checked, both claims taken, then the runner's
 * lanes under one view, one record and one set of lines. Started again on the same state
 * root, the runner resumes each lane where it stopped.
 */
export async function runCrewSession(options: CrewRunOptions, io: CrewOutput, prepare: (read: LoadedCrew, root: string) => { loaded: LoadedCrew; runner: LaneRunner }): Promise<CrewRunResult> {
  const started = performance.now();
  const startedAt = new Date().toISOString();
  // The state root is resolved as every plan command resolves it (an empty value names none).
  const root = configuredStateRoot(options.state, options.env, options.cwd)?.path ?? defaultStateRoot(options.cwd);
  const file = loadCrew(options.file, options.cwd);
  const { loaded, runner } = prepare(options.rehearse?.apply(file, root) ?? file, root);
  // A report that cannot be written is a usage error before any lane starts, not after their work.
  if (options.report !== undefined) checkReportPath(resolve(options.cwd, options.report));
  const store = openStore(root, { batched: true });
  const stop = new CrewStop(options.cancel, options.deadlineMs);
  let release: () => Promise<void>;
  // Operators' stops and cancels recorded before this are for a crew that ended (crew-control-apply.ts).
  let claimedAt = '';
  try {
    await runner.connect?.(stop);
    claimedAt = new Date().toISOString();
    release = await claimCrewRun(store, loaded, { laneControl: runner.laneControl !== undefined });
  } catch (error) {
    // CREW_BUSY, or what lanes run on unreachable: nothing started; the timers go with it.
    stop.dispose();
    await runner.close();
    throw error;
  }
  try {
    // Minted at the crew's first start on this root and kept in its record (below), read back by every later start.
    const runId = crewRunId(store, loaded.crew.crew);
    return await runClaimed({ options, io, loaded, root, store, startedAt, runId, stop, claimedAt }, runner, started);
  } finally {
    await release();
  }
}

type SessionBase = Pick<CrewSession, 'options' | 'io' | 'loaded' | 'root' | 'store' | 'startedAt' | 'runId' | 'stop'> & { readonly claimedAt: string };

/** What the crew's record and view say of the run beside its lanes. */
type RunFacts = Parameters<typeof crewRunRecord>[0];

/** What shows the crew while it runs: its view, the terminal's live region, the served page. */
interface Shown {
  view: CrewView | undefined;
  live: TerminalView | undefined;
  server: CrewServer | undefined;
}

async function runClaimed(base: SessionBase, runner: LaneRunner, started: number): Promise<CrewRunResult> {
  const { options, loaded } = base;
  const runFacts: RunFacts = {
    crew: loaded.crew.crew,
    runId: base.runId,
    file: loaded.file,
    startedAt: base.startedAt,
    // The record and the view keep the commands as the lines they show (their stored shape).
    retryCommand: commandLine(runner.retryArgv),
    capUsd: loaded.crew.limits.spend_cap_usd ?? null,
    reserveUsd: loaded.crew.limits.reserve_usd,
    stuckAfterS: options.stuckAfterS ?? DEFAULT_STUCK_AFTER_S,
  };
  // A run with nothing to run (a finished crew served to look at it) keeps the crew's record.
  const progress = loaded.lanes.map((lane) => base.store.crewLanes.get([runFacts.crew, lane.id]));
  // A complete lane the merge train sent back runs again: this run is recorded.
  const reopens = loaded.workspace !== null && progress.some((p) => p?.stage === 'complete' && trainSaid(p.runDir) !== null);
  const keepsRecord = !reopens && runsNothing(progress, options.retryFailed === true);
  if (!keepsRecord) await base.store.crewRuns.put(runFacts.crew, crewRunRecord(runFacts, null, null));
  const shown: Shown = { view: undefined, live: undefined, server: undefined };
  const lanes = await runShown(sessionOf(base, runner, shown), runner, shown, runFacts, base.claimedAt);
  return endCrew(base, runner, shown, runFacts, lanes, (performance.now() - started) / 1000, keepsRecord);
}

/** The session a runner is handed: the lanes' changes reach the view, their ends print above the live region. */
function sessionOf(base: SessionBase, runner: LaneRunner, shown: Shown): CrewSession {
  const { options, io } = base;
  const resume = runner.resumeArgv === undefined ? {} : { resumeArgv: runner.resumeArgv };
  return {
    ...base,
    land(event) {
      const landed = { type: 'land' as const, event };
      if (shown.live === undefined) io.event(landed);
      else shown.live.print(() => io.event(landed));
    },
    get view() {
      return shown.view;
    },
    laneChanged(progress) {
      shown.view?.update(progress);
      options.onLane?.(progress);
    },
    laneEnded(progress) {
      const ended = { type: 'lane_ended' as const, progress, facts: runner.laneFacts(progress), retryArgv: runner.retryArgv, ...resume, answerArgv: answerArgv(base.loaded.file, base.root, progress.lane) };
      if (shown.live === undefined) io.event(ended);
      else shown.live.print(() => io.event(ended));
    },
  };
}

/** The runner started, its lanes run under the view (served, and live on a terminal); everything started is torn down whichever start failed. */
async function runShown(session: CrewSession, runner: LaneRunner, shown: Shown, runFacts: RunFacts, claimedAt: string): Promise<LaneProgress[]> {
  const { options, io, loaded } = session;
  let refresh: NodeJS.Timeout | undefined;
  let control: CrewControl | undefined;
  let ran = false;
  try {
    const feed = await runner.start(session);
    const view = (shown.view = new CrewView(runFacts.crew, feed.stats, loaded.lanes.map((l) => l.id), feed.providers, {
      startedAt: runFacts.startedAt,
      capUsd: runFacts.capUsd,
      ...(runFacts.reserveUsd === undefined ? {} : { reserveUsd: runFacts.reserveUsd }),
      stuckAfterS: runFacts.stuckAfterS,
      retryCommand: runFacts.retryCommand,
      answerCommand: commandLine(answerArgv(loaded.file, session.root, null)),
      titles: planTitles(loaded.lanes),
      ...(runner.resumeArgv === undefined ? {} : { resumeCommand: commandLine(runner.resumeArgv) }),
      ...(feed.review === undefined ? {} : { review: feed.review }),
      ...(feed.callCodes === undefined ? {} : { callCodes: feed.callCodes }),
      ...(feed.laneStory === undefined ? {} : { laneStory: feed.laneStory }),
    }));
    shown.server = options.serve === undefined ? undefined : await serve(options.serve, view, session);
    // The URL carries the console's token: whoever opens it may act on the crew.
    if (shown.server !== undefined) io.event({ type: 'served', url: shown.server.openUrl });
    // On a terminal the crew's live region sits under the lines printed as lanes end.
    shown.live = io.stderrIsTTY ? startTerminalView(io, view, LIVE_MS) : undefined;
    refresh = shown.server === undefined ? undefined : setInterval(() => view.changed(), 1_000);
    // Operators' requests: those waiting (a retry recorded while no crew ran) are taken before any lane starts.
    control = new CrewControl({
      store: session.store,
      crew: runFacts.crew,
      claimedAt,
      stop: session.stop,
      lanes: runner.laneControl,
      taken: (taken) => {
        const event = { type: 'control' as const, taken };
        if (shown.live === undefined) io.event(event);
        else shown.live.print(() => io.event(event));
      },
    });
    await control.sweep();
    control.start();
    const lanes = await runner.runLanes(session);
    ran = true;
    return lanes;
  } finally {
    await control?.close();
    session.stop.dispose();
    // A crew that ran draws its final region below; one that failed leaves none before its error.
    if (ran) shown.live?.stop();
    else shown.live?.close(false);
    if (refresh !== undefined) clearInterval(refresh);
    await runner.close();
    // A start that failed leaves no server behind (a served crew closes it after its summary).
    if (!ran) await shown.server?.close();
  }
}

/** The crew's end: its summary in the view and the store's record, the report, the last line, then the server closed. */
async function endCrew(base: SessionBase, runner: LaneRunner, shown: Shown, runFacts: RunFacts, lanes: LaneProgress[], durationS: number, keepsRecord: boolean): Promise<CrewRunResult> {
  const { options, loaded, stop } = base;
  const counts = tally(lanes, loaded.lanes.length);
  const attempts = runner.attempts(lanes);
  const facts = { counts, attempts, durationS, stoppedBy: stop.stoppedBy };
  const summary = base.io.words.summary(facts);
  const view = shown.view!;
  // The lane check reads the branches as the crew leaves them, so the view's record, the report and the lines say one thing.
  const workspace = loaded.workspace;
  const checks = workspace === null ? [] : await crewLaneCheck(workspace.repo, workspace.commit, loaded.lanes.map((lane) => base.store.crewLanes.get([runFacts.crew, lane.id])));
  for (const check of checks) view.laneCheck(check);
  view.finish(summary);
  // The console of a finished crew, read from the store, shows what this view shows now.
  if (!keepsRecord) await base.store.crewRuns.put(runFacts.crew, crewRunRecord(runFacts, view.snapshot(), stop.stoppedBy));
  shown.live?.close(true);
  for (const check of checks) base.io.event({ type: 'land', event: check });
  if (options.report !== undefined) {
    writeCrewReport(resolve(options.cwd, options.report), {
      crew: runFacts.crew,
      file: loaded.file,
      root: base.root,
      where: runner.reportWhere,
      startedAt: base.startedAt,
      durationS,
      stoppedBy: stop.stoppedBy,
      counts,
      attempts,
      stats: runner.stats(),
      lanes,
      laneChecks: checks,
      ...(loaded.order === null ? {} : { laneOrders: loaded.order.events }),
      laneFacts: (progress) => runner.laneFacts(progress),
      providers: runner.providers(),
    });
  }
  // Lanes waiting for their owner: the command that answers them follows the summary.
  base.io.event({ type: 'summary', ...facts, ...(counts.waiting > 0 ? { answerArgv: answerArgv(loaded.file, base.root, null) } : {}) });
  if (shown.server !== undefined) {
    // Events coalesce to ten a second: the done snapshot reaches open pages before the server closes.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await shown.server.close();
  }
  return { tally: counts, lanes, stoppedBy: stop.stoppedBy, summary };
}

/**
 * The crew's page and event stream on loopback, acting through the crew's store (answers
 * and control requests, as the shell's commands record them); a port that cannot be
 * served is a usage error.
 */
async function serve(port: number, view: CrewView, session: CrewSession): Promise<CrewServer> {
  const { LANE_PAGE } = await import('../console/lane-page-route.ts');
  const { serveCrew } = await import('../console/serve.ts');
  const { consoleReads, crewConsoleActions } = await import('../console/console-ports.ts');
  const { requestControl } = await import('./crew-control.ts');
  const { loaded, root, store, options } = session;
  const reads = consoleReads(loaded, (lane) => store.crewLanes.get([loaded.crew.crew, lane])?.head ?? null);
  // A control request is recorded in the store as `crew retry|cancel|stop` records it; this crew takes it from there.
  const actions = crewConsoleActions({ loaded, root, env: options.env, cwd: options.cwd }, (request) => requestControl(store, loaded, request));
  return serveCrew(port, view, { lanePage: LANE_PAGE, actions, reads }).catch((error: unknown) => {
    throw new LanewardError('USAGE', `--serve ${port}: ${toError(error).message}`, { path: '--serve' });
  });
}
