import type { LandEvent } from '../../formats/crew/land-lines.ts';
import type { LaneProgress } from '../../formats/crew/record.ts';
import type { ProviderPause } from '../../formats/console/snapshot.ts';
import type { CrewView, CrewViewOptions } from '../console/view-state.ts';
import type { DispatchStats, SupervisePool } from '../dispatch/dispatcher.ts';
import type { Store } from '../store/store.ts';
import type { CrewTally } from './coordinator.ts';
import type { CrewOutput } from './crew-output.ts';
import type { CrewStop } from './crew-stop.ts';
import type { LaneFacts } from './lane-line.ts';
import type { LoadedCrew } from './load-crew.ts';
import type { LaneControlPort } from './crew-control-apply.ts';
import type { QaThread } from './qa-client.ts';

// The crew session's ports: what a crew run is asked (its options), what it hands a lane
// runner (the session), what a runner supplies (how lanes run), and what it returns.

export interface CrewRunOptions {
  readonly file: string;
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly state: string | undefined;
  readonly threads: number;
  readonly deadlineMs: number | undefined;
  readonly serve: number | undefined;
  readonly report: string | undefined;
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
  /**
   * Rewrites the crew as loaded, before its runners are checked (crew run --rehearse points
   * the presets at its model server); `args` go into every retry and resume command printed,
   * so the command that continues a rehearsal rehearses too.
   */
  readonly rehearse?: { readonly apply: (loaded: LoadedCrew, root: string) => LoadedCrew; readonly args: readonly string[] };
  /**
   * Threads that outlive this run, to run its children on (a queue worker's, shared by its
   * lane jobs): the crew makes its dispatcher over them, and its close leaves them running.
   * Without it, the crew starts a pool of `threads` and closes it at the end.
   */
  readonly pool?: SupervisePool;
  /** A QA thread that outlives this run, of this run's state root: the crew is a tenant of it. */
  readonly qa?: QaThread;
}


export interface CrewRunResult {
  readonly tally: CrewTally;
  readonly lanes: readonly LaneProgress[];
  /** Why the crew stopped early: 'deadline', a signal name, or null. */
  readonly stoppedBy: string | null;
  readonly summary: string;
}

/** What every crew run holds while its lanes run, whichever runner runs them. */
export interface CrewSession {
  readonly options: CrewRunOptions;
  readonly io: CrewOutput;
  readonly loaded: LoadedCrew;
  readonly root: string;
  readonly store: Store;
  readonly startedAt: string;
  /** The crew's run on this state root (its lanes' branches carry it): see crew-run-id.ts. */
  readonly runId: string;
  /** A cancel, the deadline, or the runner's own stop. */
  readonly stop: CrewStop;
  /** The crew's live view, once its runner started (undefined before). */
  readonly view: CrewView | undefined;
  /** A lane's progress changed: the views (and a queue worker's coordinator) hear it. */
  laneChanged(progress: LaneProgress): void;
  /** A lane ended: the edge prints it (its CREW_LANE line or object), above the live region. */
  laneEnded(progress: LaneProgress): void;
  /** A lane's pregate or receipt (its PREGATE: or SHIP_RECEIPT: lines at the edge), above the live region. */
  land(event: LandEvent): void;
}

/** What a runner's view reads beyond the lanes the session feeds it. */
export interface LaneFeed extends Pick<CrewViewOptions, 'review' | 'callCodes' | 'laneStory'> {
  /** The attempts running and queued, and renewal latency, for the view. */
  readonly stats: () => DispatchStats;
  /** Providers paused by a rate limit now. */
  readonly providers?: () => readonly ProviderPause[];
}

/**
 * How a crew's lanes run: in this process (a dispatcher and a QA thread) or on queue
 * workers (jobs through Redis). It supplies only that; the session owns the claims, the
 * cancel and deadline, the view and its server, the store's crew-run record, the report
 * and the lines, so both ways print, record and refuse alike.
 */
export interface LaneRunner {
  /** The command that runs the failed lanes again, as argv. */
  readonly retryArgv: readonly string[];
  /** The command that continues the crew's unfinished lanes, as argv, where a runner can say it. */
  readonly resumeArgv?: readonly string[];
  /** What the report says after its state root (a queued crew's queue URL). */
  readonly reportWhere: Readonly<Record<string, unknown>>;
  /** How it applies operators' lane requests (crew retry|cancel); absent: it takes only stop, and they are refused typed. */
  readonly laneControl?: LaneControlPort;
  /** Before the claims: reaches what lanes run on (a queue's Redis); a throw starts nothing. */
  connect?(stop: CrewStop): Promise<void>;
  /** With the claims held and the crew's run recorded: starts what runs lanes, returns what the view reads. */
  start(session: CrewSession): Promise<LaneFeed>;
  /** Runs (or follows) every lane; returns the lanes that ended, in file order. */
  runLanes(session: CrewSession): Promise<LaneProgress[]>;
  /** What a lane's line and report object say beside its progress. */
  laneFacts(progress: LaneProgress): LaneFacts;
  /** The attempts the summary counts. */
  attempts(lanes: readonly LaneProgress[]): number;
  /** The figures of the report's stats once the lanes ended. */
  stats(): DispatchStats;
  /** The report's providers. */
  providers(): readonly unknown[];
  /** Tears down whatever connect and start began, whichever of them failed; never throws. */
  close(): Promise<void>;
}
