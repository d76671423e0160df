import { isOwnerWaiting, type LaneProgress } from './record.ts';

/** What an operator asks a running crew to do (crew retry|cancel|stop, the console's buttons). */
export type ControlAction = 'retry' | 'cancel_call' | 'cancel_lane' | 'stop';

export const CONTROL_ACTIONS: readonly ControlAction[] = ['retry', 'cancel_call', 'cancel_lane', 'stop'];

/** One operator request: `lane` is null only for stop; `by` is who asks, `human:<name>`. */
export interface ControlRequest {
  readonly action: ControlAction;
  readonly lane: string | null;
  readonly by: string;
}

/**
 * What recording a request did: `requested` (kept in the store under `seq`, for the crew
 * to apply) or `refused` before anything was recorded (its code says why; seq null).
 */
export interface ControlResult {
  readonly status: 'requested' | 'refused';
  readonly code: string | null;
  readonly detail: string | null;
  readonly seq: number | null;
}

/**
 * A request as the store keeps it under [crew, seq]: `requested` until a crew takes it,
 * then `applied` or `refused` (with its code) once, in the transaction that takes it, so
 * no request is applied twice, whatever restarts.
 */
export interface ControlRecord {
  readonly v: 1;
  readonly crew: string;
  readonly seq: number;
  readonly action: ControlAction;
  readonly lane: string | null;
  readonly by: string;
  readonly at: string;
  readonly status: 'requested' | 'applied' | 'refused';
  readonly code: string | null;
  readonly detail: string | null;
  /** When a crew took it (applied or refused), null before. */
  readonly doneAt: string | null;
}

/** What the store says of the crew and the lane when a request is recorded. */
export interface ControlFacts {
  /** A process runs the crew on this state root now (its claim's pid and start tick still run). */
  readonly running: boolean;
  /** The running crew applies lane actions (a crew run in one process; a queued crew applies only stop). */
  readonly laneControl: boolean;
  /** Whether the crew file names the lane. */
  readonly known: boolean;
  /** The lane's saved progress, undefined for a lane that never started. */
  readonly progress: Pick<LaneProgress, 'stage' | 'stoppedIn' | 'code'> | undefined;
}

/** Why a request cannot apply, as a code and its detail; null when it can be recorded. */
export interface ControlRefusal {
  readonly code: string;
  readonly detail: string;
}

/**
 * Refuses, before anything is recorded, what cannot apply. Without a running crew only a
 * retry is kept (the next crew run takes it); stop and the cancels need the crew that
 * runs the lane. What the store cannot say (whether a call runs this very moment) the
 * crew decides when it takes the request, and records.
 */
export function controlRefusal(action: ControlAction, facts: ControlFacts): ControlRefusal | null {
  if (action === 'stop') return facts.running ? null : notRunning();
  if (!facts.known) return { code: 'LANE_UNKNOWN', detail: 'the crew file names no such lane' };
  if (facts.running && !facts.laneControl) return { code: 'CREW_CONTROL_UNSUPPORTED', detail: 'the crew runs on queue workers, which take only stop' };
  const p = facts.progress;
  const stage = p?.stage;
  switch (action) {
    case 'retry':
      if (p === undefined) return { code: 'LANE_NOT_RETRYABLE', detail: 'the lane has not started' };
      if (stage === 'complete') return { code: 'LANE_NOT_RETRYABLE', detail: 'the lane is complete' };
      if (isOwnerWaiting(p)) return { code: 'LANE_NOT_RETRYABLE', detail: 'the lane waits at its gate for the owner\'s answer (crew answer)' };
      if (facts.running && stage !== 'failed' && stage !== 'interrupted') return { code: 'LANE_NOT_RETRYABLE', detail: `the lane is running (${stage})` };
      return null;
    case 'cancel_call':
      if (!facts.running) return notRunning();
      if (p === undefined || stage === 'queued' || stage === 'complete' || stage === 'failed' || stage === 'interrupted') return { code: 'CALL_NOT_RUNNING', detail: `the lane has no running call (${stage ?? 'not started'})` };
      return null;
    case 'cancel_lane':
      if (!facts.running) return notRunning();
      if (stage === 'complete' || stage === 'failed') return { code: 'LANE_NOT_RUNNING', detail: `the lane has ended (${stage})` };
      return null;
  }
}

function notRunning(): ControlRefusal {
  return { code: 'CREW_NOT_RUNNING', detail: 'no process runs the crew on this state root' };
}

/** `by` as a running crew's stoppedBy says it: `operator:<name>`. */
export function operatorOf(by: string): string {
  return `operator:${by.startsWith('human:') ? by.slice('human:'.length) : by}`;
}
