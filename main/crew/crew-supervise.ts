import type { Prices } from '../providers/cost.ts';
import { costOf } from '../providers/cost.ts';
import type { RateLimitPause } from '../providers/rate-limit-pause.ts';
import { refusedOutcome } from '../../workers/supervise/outcome.ts';
import type { SuperviseFn } from '../dispatch/dispatcher.ts';
import { abortSignalName, cancelledBeforeStart } from '../dispatch/cancelled.ts';
import type { CrewSpend } from './crew-spend.ts';
import type { LaneCancels } from './lane-cancels.ts';

/** What a crew adds around its dispatcher's supervise function, each layer in the order a call meets it. */
export interface CrewSuperviseLayers {
  /** The dispatcher's own (a slot among the crew's limit, then the supervisor); asked for once a call passed the others. */
  readonly dispatch: SuperviseFn;
  /** The crew's cap: a call first holds its reservation, settled at its real cost once it ended. */
  readonly spend: CrewSpend;
  readonly prices: Prices | undefined;
  /** The rate-limit pause per provider: no call of a paused provider starts (nor is journaled as dispatched). */
  readonly pause: RateLimitPause;
  /** The crew's stop: a call cancelled while it waited starts nothing. */
  readonly stop: AbortSignal;
  /** The crew's lane a call is of, if any. */
  readonly laneOf: (spec: Parameters<SuperviseFn>[0]) => string | undefined;
  /** Admitted marks of a lane's call: its sign of life for the views. */
  readonly activity: (lane: string) => void;
  /** Awaited at the slot after the caller's own step, before the spawn (a queue worker mirrors the lane's journal). */
  readonly beforeChild: ((lane: string | undefined) => Promise<void>) | undefined;
  /** The operator's cancels per lane: a lane's call is cancelled by the crew's stop or by its lane's cancel. */
  readonly cancels?: LaneCancels;
}

/**
 * The crew's supervise function, one composition: spend admit, then the provider's pause,
 * then the dispatcher with the slot hooks (pause again, the caller's step, pause again,
 * the crew's step). Every child's budget runs from its slot: a lane waiting behind the
 * limit is not late.
 */
export function crewSupervise(layers: CrewSuperviseLayers): SuperviseFn {
  const { spend, pause } = layers;
  const paused = async (spec: Parameters<SuperviseFn>[0], options: Parameters<SuperviseFn>[1], lane: string | undefined, stop: AbortSignal): ReturnType<SuperviseFn> => {
    const provider = spec.provider;
    if (provider !== undefined && !(await pause.admit(provider, stop))) return cancelledBeforeStart(spec, abortSignalName(stop));
    // Admitted marks are the lane's sign of life: a lane without them for minutes is stuck.
    const onMarks = lane === undefined ? undefined : () => layers.activity(lane);
    const onSlot = async () => {
      // Cancelled while it waited: nothing is journaled; the dispatcher, seeing the cancel, starts nothing.
      if (provider !== undefined && !(await pause.beforeStart(provider, stop))) return;
      await options?.onSlot?.();
      // A limit that came while the dispatch was being journaled is waited out too, before the spawn.
      if (provider !== undefined && !(await pause.beforeStart(provider, stop))) return;
      await layers.beforeChild?.(lane);
    };
    const outcome = await layers.dispatch(spec, { ...options, cancel: stop, budgetFromSlot: true, onSlot, ...(onMarks === undefined ? {} : { onMarks }) });
    if (provider !== undefined) pause.ended(provider, outcome);
    return outcome;
  };
  return async (spec, options) => {
    const lane = layers.laneOf(spec);
    // A lane's call hears its lane's cancel as well as the crew's stop (crew cancel, the console).
    const stop = lane === undefined || layers.cancels === undefined ? layers.stop : layers.cancels.signal(lane);
    const untrack = lane === undefined ? undefined : layers.cancels?.track(lane);
    let cost: number | null = null;
    let hold: Awaited<ReturnType<CrewSpend['admit']>> | undefined;
    try {
      hold = await spend.admit(stop, { running: spec.adopt !== undefined });
      if (hold === 'cancelled') return cancelledBeforeStart(spec, abortSignalName(stop));
      if (hold === 'refused') return refusedOutcome('SPEND_CAP_EXCEEDED', spec.action, spec.startedAt);
      const outcome = await paused(spec, options, lane, stop);
      // Nothing went out to a model from a call that never started: it cost nothing.
      cost = !outcome.providerStarted ? 0 : options?.charge !== undefined ? options.charge(outcome) : costOf(outcome.provider, spec.model ?? null, layers.prices);
      return outcome;
    } finally {
      if (hold !== undefined && hold !== 'cancelled' && hold !== 'refused') hold.settle(cost);
      untrack?.();
    }
  };
}
