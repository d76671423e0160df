import type { ControlAction, ControlRecord, ControlRefusal } from '../../formats/crew/control.ts';
import type { Store } from '../store/store.ts';
import { pendingControls, settleControl } from './crew-control.ts';
import type { CrewStop } from './crew-stop.ts';
import { OWNER_POLL_MS } from './owner-wait.ts';

export type LaneAction = Exclude<ControlAction, 'stop'>;

/** What a runner that applies lane requests does with them (a crew run in one process). */
export interface LaneControlPort {
  /** Why `action` cannot apply to `lane` now, against what this crew holds; null when it can. */
  refusal(action: LaneAction, lane: string): ControlRefusal | null;
  /** Applies it, once its outcome is committed. */
  apply(action: LaneAction, lane: string, by: string, seq: number): void;
}

/** One request taken, as the crew's CREW_CONTROL line says it. */
export interface ControlTaken {
  readonly seq: number;
  readonly action: ControlAction;
  readonly lane: string | null;
  readonly by: string;
  readonly status: 'applied' | 'refused';
  readonly code: string | null;
  readonly detail: string | null;
}

export interface CrewControlOptions {
  readonly store: Store;
  readonly crew: string;
  /** When this crew run took its claim: a stop or cancel recorded before was meant for a crew that ended. */
  readonly claimedAt: string;
  readonly stop: CrewStop;
  /** Absent: the runner takes only stop (a queued crew); its lane requests are refused typed. */
  readonly lanes: LaneControlPort | undefined;
  readonly taken: (taken: ControlTaken) => void;
}

/**
 * A running crew's side of operators' requests: the store's pending requests of this crew
 * are looked at every {@link OWNER_POLL_MS} (the cadence at which parked lanes' gates are
 * looked at), in order, each taken once (settleControl commits its outcome before it is
 * acted on) and said on one line. A retry recorded while no crew ran is taken by the
 * next crew run at its start; a stop or a cancel recorded for a crew that ended before it
 * took them is refused CREW_NOT_RUNNING, never applied to a later run.
 */
export class CrewControl {
  private after = 0;
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;

  constructor(private readonly options: CrewControlOptions) {}

  /** Starts looking; the first look is awaited by the caller (`sweep`) before any lane starts. */
  start(): void {
    this.timer = setInterval(() => {
      // One look at a time: a look slower than the interval is not overlapped.
      if (this.sweeping === undefined) this.sweeping = this.sweep().finally(() => (this.sweeping = undefined));
    }, OWNER_POLL_MS);
    this.timer.unref();
  }

  /** Takes every pending request, in order. */
  async sweep(): Promise<void> {
    const { store, crew } = this.options;
    for (const record of pendingControls(store, crew, this.after)) {
      const outcome = this.decide(record);
      this.after = record.seq;
      if (!(await settleControl(store, crew, record.seq, outcome))) continue;
      if (outcome.status === 'applied') this.apply(record);
      this.options.taken({ seq: record.seq, action: record.action, lane: record.lane, by: record.by, ...outcome });
    }
  }

  /** Stops looking; a look under way ends first. */
  async close(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    await this.sweeping;
  }

  private decide(record: ControlRecord): { status: 'applied' | 'refused'; code: string | null; detail: string | null } {
    const refused = (r: ControlRefusal) => ({ status: 'refused' as const, code: r.code, detail: r.detail });
    if (record.action !== 'retry' && record.at < this.options.claimedAt) return refused({ code: 'CREW_NOT_RUNNING', detail: 'recorded for a run of the crew that ended before it took the request' });
    if (this.options.stop.signal.aborted) return refused({ code: 'CREW_NOT_RUNNING', detail: 'the crew is stopping' });
    if (record.action === 'stop') return { status: 'applied', code: null, detail: null };
    if (record.lane === null) return refused({ code: 'LANE_UNKNOWN', detail: 'a lane request names no lane' });
    if (this.options.lanes === undefined) return refused({ code: 'CREW_CONTROL_UNSUPPORTED', detail: 'the crew runs on queue workers, which take only stop' });
    const why = this.options.lanes.refusal(record.action, record.lane);
    return why === null ? { status: 'applied', code: null, detail: null } : refused(why);
  }

  private apply(record: ControlRecord): void {
    if (record.action === 'stop') this.options.stop.byOperator(record.by);
    else this.options.lanes?.apply(record.action, record.lane!, record.by, record.seq);
  }
}
