import type { ChildRecord, OrphanEnd } from '../supervision/child-record.ts';
import type { Consensus } from '../consensus/types.ts';
import type { ReplyMode } from '../gate/reply.ts';
import type { ReviewFinding } from './finding.ts';
import type { GateItem } from '../schemas/gate.ts';

/**
 * The records of a review run as the store keeps them (CBOR in LMDB). The run record is
 * the state machine; journal events are the append-only history of its transitions.
 */

export const PHASES = ['ceo', 'design', 'dx', 'eng'] as const;
export type PhaseId = (typeof PHASES)[number];
export type VoiceId = 'native' | 'outside';
export const VOICES: readonly VoiceId[] = ['native', 'outside'];

/** What the run is waiting for; the terminal line prints the run-facing subset. */
export type RunState =
  | 'awaiting_result' // a phase is open: attempts are out
  | 'phase_closed' //    a phase closed; `next` opens the following one or writes the gate
  | 'gate_pending' //    the gate is written and not fully answered
  | 'complete' //        the gate was approved
  | 'reviewed' //        a CEO-only run's one phase closed; there is no gate
  | 'incomplete' //      the owner ended the run (p1e)
  | 'interrupted';

export type AttemptState = 'open' | 'bound' | 'released' | 'abandoned' | 'failed' | 'unavailable';

export interface BoundResult {
  readonly sha256: string;
  readonly model: string;
  readonly family: string | null;
  readonly runner: string;
  readonly receipt: 'input' | 'attested';
  readonly attest: string | null;
  readonly findings: number;
  readonly usage_usd: number | null;
  readonly at: string;
}

export interface AttemptRecord {
  readonly id: string;
  readonly phase: PhaseId;
  readonly voice: VoiceId;
  state: AttemptState;
  /** Run-relative paths: the run directory may move. */
  readonly prompt: string;
  readonly result: string;
  readonly minted_at: string;
  /** Dollars held for this attempt while it is open (0 without a cap or estimate). */
  reserve_usd: number;
  /** Which command minted it: a later command that finds it open reports it unknown. */
  readonly minted_by: number;
  bound?: BoundResult;
  why?: string;
  /** When `plan run` handed the attempt to a supervisor: its provider may have started. */
  dispatched_at?: string;
  /** The process that dispatched it (pid and start tick): alive, it still drives the attempt. */
  dispatched_by?: { readonly pid: number; readonly ticks: string };
  /**
   * The child its provider runs as, journaled at the spawn; null from the dispatch until
   * then (none spawned yet). Undefined on attempts dispatched before children were recorded.
   */
  child?: ChildRecord | null;
  /** How a later driver settled that child after the one that dispatched it died. */
  orphan?: OrphanEnd;
  /** The result code of a voice that failed or was unavailable (a supervision or submit code). */
  code?: string;
}

export type VoiceStatus = 'pending' | 'running' | 'completed' | 'unavailable' | 'failed';

export interface VoiceSlot {
  status: VoiceStatus;
  attempt: string | null;
}

export interface PhaseRecord {
  readonly id: PhaseId;
  state: 'waiting' | 'open' | 'closed';
  snapshot: string | null;
  native: VoiceSlot;
  outside: VoiceSlot;
  opened_at: string | null;
  closed_at: string | null;
  consensus: Consensus | null;
}

export interface SpendRecord {
  readonly cap: number | null;
  /** The reservation per attempt (`--estimate-usd`), or the default under a cap. */
  estimate: number | null;
  spent: number;
  reserved: number;
  unknown_n: number;
  unknown_usd: number;
}

export interface GateAnswer {
  readonly chosen: string;
  readonly status: 'approved' | 'overridden' | 'rejected';
  readonly source: string;
  readonly owner_named: boolean;
  readonly owner_mode: ReplyMode;
  readonly reply: string;
  readonly at: string;
  readonly by: string | null;
  readonly role: 'human' | 'agent' | null;
  readonly owner_reply: string | null;
  readonly words_by: string | null;
  readonly rec_hash: string;
  /** Set when the answer was carried from an earlier gate revision. */
  readonly carried?: { readonly from: string; readonly rev: number; readonly by: string | null };
  readonly carried_under?: 'do it';
}

export interface GateRecord {
  readonly rev: number;
  /** Bumped by `plan recommend`; a later rec or p1b must name the current rec_hash. */
  rec_rev: number;
  items: GateItem[];
  readonly written_at: string;
  rec_hash: string;
  /** Finding ids each item stands for (a twin pair is one item). */
  readonly findings: Record<string, string[]>;
  answers: Record<string, GateAnswer>;
  /** Answered by carrying an earlier revision's answer forward. */
  carried?: boolean;
  /** The implementation section this gate was written for (plan-at-gate.r<rev>.md). */
  implementation?: string;
  /** The item standing for a plan change made after the round cap, unreviewed. */
  delta_item?: string;
  /** The read of that delta by a reviewer of another family, before a carry. */
  check?: CarryCheck;
}

export interface CarryCheck {
  readonly attempt: string;
  state: 'open' | 'pass' | 'fail' | 'unavailable' | 'void';
  readonly prompt: string;
  readonly result: string;
  reserve_usd: number;
  model?: string;
  findings?: number;
  severe?: number;
  why?: string;
  at?: string;
}

export interface Amendment {
  readonly decision: string;
  readonly title: string;
  readonly chosen: string;
}

export type SessionKind = 'interactive' | 'headless' | 'spawned' | 'unattended';

export interface RunRecord {
  readonly v: 1;
  readonly run: string;
  readonly created_at: string;
  updated_at: string;
  /** The journal's next sequence number. */
  seq: number;
  /** Commands applied so far; attempts remember which one minted them. */
  commands: number;
  state: RunState;
  readonly session_kind: SessionKind;
  readonly plan_source: string;
  plan_sha256: string;
  /** 1 for the plan the run started with; each revise adds one. */
  plan_rev?: number;
  plan_items: string[];
  implementation: string;
  snapshot: string;
  readonly order: PhaseId[];
  /** `next --ceo-only`: the CEO phase alone, no gate, nothing approved. */
  readonly ceo_only: boolean;
  /** Whether a later gate revision may be answered with the owner's earlier words. */
  carry_forward: boolean;
  /** Gate revisions after which a revise no longer reopens phases (`--round-cap`). */
  round_cap?: number | null;
  /** Dollars a carry check may reserve (`--carry-check-cap`, default 5). */
  carry_check_cap?: number;
  /** A plan change a capped revise took without review, for the next gate. */
  delta?: { readonly from: string; readonly rev: number } | null;
  readonly scope: { ui: boolean; dx: boolean; source: string };
  phases: Partial<Record<PhaseId, PhaseRecord>>;
  current: PhaseId | null;
  attempts: Record<string, AttemptRecord>;
  next_attempt: number;
  spend: SpendRecord;
  gate_rev: number;
  gate: GateRecord | null;
  /** Earlier gates of this run (a rerun or revise writes the next revision). */
  past_gates: GateRecord[];
  amendments: Amendment[];
  deviations: string[];
  export: { state: 'started' | 'done'; at: string } | null;
  /** The `plan run` driving the run now (absent when none): one driver per run. */
  driver?: RunDriver;
}

/** The process that drives a run with `plan run`, and which call of it (one claim per call). */
export interface RunDriver {
  readonly pid: number;
  /** Its start tick (/proc/<pid>/stat field 22), so a reused pid is not taken for it. */
  readonly ticks: string;
  /** Random per claim: two drivers in one process are two claims. */
  readonly token: string;
  readonly since: string;
}

/** One phase's wall time in one finished run (the store's cross-run history). */
export interface PhaseTiming {
  readonly at: string;
  readonly seconds: number;
}

/** A bound result's bytes and findings, stored beside the run record. */
export interface BoundBlob {
  readonly bytes: Uint8Array;
  readonly findings: ReviewFinding[];
}

/** One journal event: a transition, as data. */
export interface JournalEvent {
  readonly type: string;
  readonly at: string;
  readonly [field: string]: unknown;
}
