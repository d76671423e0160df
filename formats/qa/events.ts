import type { QaMode, TurnRole } from './record.ts';

/**
 * When an observer call ended and how its supervision went, journaled with its verdict (or
 * its failure): the lane's journal is the one record of a call that outlives a stop, which
 * clears the transcript. Absent on events journaled before these were kept.
 */
export interface ObserverCallFacts {
  /** When the call's end was recorded (ISO). */
  readonly at?: string;
  readonly supervision?: {
    /** When the call began (ISO), before its slot was granted. */
    readonly started_at: string;
    readonly status: string;
    readonly marks: number;
    readonly duration_ms: number;
    readonly cleanup_confirmed: boolean;
    /** A preset observer's provider session, as its stream reported it. */
    readonly session: string | null;
    /**
     * The supervision's own code, when it ended with one: PROVIDER_NO_EXIT for a call whose
     * verdict stands though its provider had to be torn down. Absent on journals kept before.
     */
    readonly code?: string | null;
    /** The observer's own exit status (128 + n for a signal), its signal, and the last lines of its stderr (escaped, bounded); absent on journals kept before. */
    readonly exit_code?: number | null;
    readonly signal?: string | null;
    readonly stderr?: readonly string[];
  };
}

/**
 * Everything a QA command reports, one event per line (formats/qa/lines.ts) and in the
 * lane's journal. Discriminated on `type`.
 */
export type QaEvent =
  /** A lane was (re)started with an observer; bootstrap follows. */
  | { readonly type: 'started'; readonly lane: string; readonly action: string }
  /** A passing bootstrap: cadence may run. */
  | ({ readonly type: 'ready'; readonly lane: string; readonly call: number; readonly note: string } & ObserverCallFacts)
  /** An observer call that gave no usable verdict, or a bootstrap that did not pass. */
  | ({ readonly type: 'observer_failed'; readonly lane: string; readonly mode: QaMode; readonly call: number; readonly code: string; readonly detail: string } & ObserverCallFacts)
  /** One ingested turn. Reasoning has index null: it is counted, never stored. */
  | { readonly type: 'turn'; readonly lane: string; readonly role: TurnRole; readonly index: number | null; readonly diff: boolean; readonly unsent: number }
  /** A cadence window closed while the observer is not ready: no check ran. */
  | { readonly type: 'cadence_paused'; readonly lane: string; readonly turns: number }
  /** A cadence check's verdict on turns [from, to). */
  | ({ readonly type: 'update'; readonly lane: string; readonly call: number; readonly from: number; readonly to: number; readonly verdict: 'pass' | 'fail'; readonly note: string; readonly guidance: string | null } & ObserverCallFacts)
  /** Diff-bearing turns await a review (`cooldown`), or were left unreviewed at a stop or reset (`final`). */
  | { readonly type: 'review_request'; readonly lane: string; readonly reason: 'cooldown' | 'final'; readonly turns: readonly number[]; readonly summary: string }
  /** The cross-check's verdict; only `allowed` lets completion through. */
  | ({ readonly type: 'cross_check'; readonly lane: string; readonly call: number; readonly verdict: 'pass' | 'fail' | 'error'; readonly code: string | null; readonly from: number; readonly note: string; readonly guidance: string | null; readonly completion: 'allowed' | 'aborted' } & ObserverCallFacts)
  /** Completion refused before any call (no observer, no bootstrap). */
  | { readonly type: 'completion_refused'; readonly lane: string; readonly code: string }
  /** History cleared and readiness reset by a stop or a reset. */
  | { readonly type: 'cleared'; readonly lane: string; readonly reason: 'stop' | 'reset'; readonly turns: number; readonly exchanges: number; readonly frames: number };

export type QaEventType = QaEvent['type'];
