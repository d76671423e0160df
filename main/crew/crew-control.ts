import { LanewardError } from '../../formats/codes/error.ts';
import { controlRefusal, type ControlAction, type ControlRecord, type ControlRequest, type ControlResult } from '../../formats/crew/control.ts';
import { holderAlive } from '../process/process-alive.ts';
import { writeTransaction, type Store } from '../store/store.ts';
import type { LoadedCrew } from './load-crew.ts';

export type { ControlAction, ControlRecord, ControlRequest, ControlResult } from '../../formats/crew/control.ts';

// `human:<name>`: the name is one word of visible text (as crew answer's --by).
const BY = /^human:[^\s\p{C}\p{Z}]{1,64}$/u;

/**
 * Records an operator's request to the crew in the store, in one write transaction with
 * the checks it passed: what cannot apply is refused typed before anything is recorded
 * (see controlRefusal); a request kept gets the crew's next sequence number. A running
 * crew on that state root takes it within about a second (crew-control-apply.ts) and
 * records its outcome, applied or refused, once. A malformed request (an action or a
 * `by` this laneward does not know, a lane on stop) throws USAGE.
 */
export async function requestControl(store: Store, crew: LoadedCrew, request: ControlRequest): Promise<ControlResult> {
  checkRequest(request);
  const name = crew.crew.crew;
  const known = request.lane !== null && crew.lanes.some((lane) => lane.id === request.lane);
  return writeTransaction(store, store.crewControl, (): ControlResult => {
    const driver = store.crewDrivers.get(name);
    const running = driver !== undefined && holderAlive(driver);
    const progress = request.lane === null ? undefined : store.crewLanes.get([name, request.lane]);
    const refused = controlRefusal(request.action, { running, laneControl: driver?.laneControl === true, known, progress });
    if (refused !== null) return { status: 'refused', code: refused.code, detail: refused.detail, seq: null };
    const seq = lastSeq(store, name) + 1;
    const record: ControlRecord = { v: 1, crew: name, seq, action: request.action, lane: request.lane, by: request.by, at: new Date().toISOString(), status: 'requested', code: null, detail: null, doneAt: null };
    void store.crewControl.put([name, seq], record);
    return { status: 'requested', code: null, detail: null, seq };
  });
}

/** The request `seq` of the crew as the store has it now (its outcome once a crew took it). */
export function readControl(store: Store, crew: string, seq: number): ControlRecord | undefined {
  return store.crewControl.get([crew, seq]);
}

/** The crew's requests no crew took yet, oldest first, from `after` on. */
export function pendingControls(store: Store, crew: string, after = 0): ControlRecord[] {
  const found: ControlRecord[] = [];
  for (const { value } of store.crewControl.getRange({ start: [crew, after + 1], end: [crew, Number.MAX_SAFE_INTEGER] })) {
    if (value.status === 'requested') found.push(value);
  }
  return found;
}

/**
 * Takes request `seq` once: in one write transaction, a request still `requested` gets
 * its outcome; one already taken (by this crew, or by one that ran before and died after
 * its commit) is not taken again, and `false` says so. The caller acts only on `true`,
 * after the commit: a crash between the two loses the action, never doubles it.
 */
export async function settleControl(store: Store, crew: string, seq: number, outcome: { readonly status: 'applied' | 'refused'; readonly code: string | null; readonly detail: string | null }): Promise<boolean> {
  return writeTransaction(store, store.crewControl, () => {
    const current = store.crewControl.get([crew, seq]);
    if (current === undefined || current.status !== 'requested') return false;
    void store.crewControl.put([crew, seq], { ...current, ...outcome, doneAt: new Date().toISOString() });
    return true;
  });
}

function lastSeq(store: Store, crew: string): number {
  for (const { key } of store.crewControl.getRange({ start: [crew, Number.MAX_SAFE_INTEGER], end: [crew, 0], reverse: true, limit: 1 })) return key[1];
  return 0;
}

const ACTIONS: ReadonlySet<ControlAction> = new Set(['retry', 'cancel_call', 'cancel_lane', 'stop']);

function checkRequest(request: ControlRequest): void {
  if (!ACTIONS.has(request.action)) throw new LanewardError('USAGE', `a control request's action is retry, cancel_call, cancel_lane or stop, got ${JSON.stringify(request.action)}`);
  if (!BY.test(request.by)) throw new LanewardError('USAGE', `a control request is made by human:<name>, one word of visible characters (at most 64), got ${JSON.stringify(request.by)}`);
  if ((request.action === 'stop') !== (request.lane === null)) throw new LanewardError('USAGE', request.action === 'stop' ? 'stop is the whole crew\'s: it names no lane' : `${request.action} names the lane it acts on`);
}
