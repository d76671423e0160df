import type { LaneProgress } from '../../formats/crew/record.ts';
import type { SuperviseFn } from '../dispatch/dispatcher.ts';
import type { Store } from '../store/store.ts';
import type { CrewActions } from './crew-actions.ts';
import type { OrphanSettlements } from './orphan-sweep.ts';
import type { QaPort, ReviewPort } from './ports.ts';

/** Everything a lane driver shares with the other lanes of its crew. */
export interface LaneContext {
  readonly crew: string;
  readonly out: string;
  readonly store: Store;
  readonly actions: CrewActions;
  readonly review: ReviewPort;
  readonly qa: QaPort;
  readonly run: SuperviseFn;
  readonly agentTurns: number;
  /** Failed lanes run again (crew run --retry-failed); else a failed lane is left as it is. */
  readonly retryFailed?: boolean;
  readonly cancel: AbortSignal;
  /** Orphans of a crew that died, being settled before the lanes started. */
  readonly orphans?: OrphanSettlements;
  /** Called after every saved change, for the live view and the lines. */
  readonly onChange: (progress: LaneProgress) => void;
}
