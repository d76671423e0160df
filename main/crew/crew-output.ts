import type { LandEvent } from '../../formats/crew/land-lines.ts';
import type { LaneProgress } from '../../formats/crew/record.ts';
import type { TerminalOutput } from '../console/terminal-view.ts';
import type { RunStop } from '../plan/index.ts';
import type { CrewTally } from './coordinator.ts';
import type { LaneFacts } from './lane-line.ts';
import type { ControlTaken } from './crew-control-apply.ts';
import type { SandboxState } from '../../formats/sandbox/bwrap-argv.ts';

/** What a crew's summary says: its lanes' counts, the attempts, how long, and why it stopped early (or null). */
export interface CrewSummaryFacts {
  readonly counts: CrewTally;
  readonly attempts: number;
  readonly durationS: number;
  readonly stoppedBy: string | null;
}

/**
 * What a crew reports as it runs, as facts: the edge (main/cli/crew-lines.ts) words each
 * as its line or object. The commands that retry or resume a lane are argv.
 */
export type CrewEvent =
  | {
      readonly type: 'lane_ended';
      readonly progress: LaneProgress;
      readonly facts: LaneFacts;
      readonly retryArgv: readonly string[];
      readonly resumeArgv?: readonly string[];
      /** The command that answers the lane's gate for its owner (said only for a lane that waits). */
      readonly answerArgv?: readonly string[];
    }
  | { readonly type: 'served'; readonly url: string }
  /** An operator's request the crew took (crew retry|cancel|stop, the console), applied or refused. */
  | { readonly type: 'control'; readonly taken: ControlTaken }
  /** The crew's sandbox, said before any lane starts (a crew whose preset agents work in worktrees). */
  | { readonly type: 'sandbox'; readonly state: SandboxState }
  | { readonly type: 'requeued'; readonly lane: string; readonly records: number }
  | { readonly type: 'land'; readonly event: LandEvent }
  | ({ readonly type: 'summary'; readonly answerArgv?: readonly string[] } & CrewSummaryFacts);

/**
 * The words a crew keeps rather than prints, made at the edge all the same: the summary
 * its view and the store's crew-run record hold, and a stopped review run's lane detail
 * (stored in the lane's progress, which every reader shows as it is).
 */
export interface CrewWords {
  summary(facts: CrewSummaryFacts): string;
  stop(stop: RunStop): string;
}

/** Where a crew reports: its events (the edge prints them), its words, and stderr for its live view. */
export interface CrewOutput extends TerminalOutput {
  event(event: CrewEvent): void;
  readonly words: CrewWords;
  errRaw(data: string): void;
  readonly stderrIsTTY: boolean;
}
