import type { TimeoutMode } from '../../formats/supervision/modes.ts';
import { nowMs } from './monotonic-timer.ts';
import type { ProviderFacts } from '../../formats/providers/facts.ts';

export type TimeoutCode = 'DEADLINE_EXPIRED' | 'LEASE_EXPIRED' | 'POST_PROVIDER_TIMEOUT' | 'PROVIDER_NO_START';
export type FailureCode =
  | 'CHILD_FAILED'
  | 'COMMAND_NOT_FOUND'
  | 'COMMAND_NOT_EXECUTABLE'
  | 'SPAWN_FAILED'
  | 'PROGRESS_CHANNEL_LOST'
  | 'PROGRESS_INVALID'
  | 'OUTPUT_LIMIT'
  | 'TOOL_DENIED'
  | 'TEARDOWN_UNPROVEN'
  /** It finished (its terminal event came) but had to be torn down: its result stands (see {@link finishedWork}). */
  | 'PROVIDER_NO_EXIT'
  | 'PROVIDER_RATE_LIMITED';
/** Refused before anything was spawned: a descriptor that failed, or a crew's spend cap that has no room. */
export type RefusalCode = 'DESCRIPTOR_INVALID' | 'TRUST_KEY_UNUSABLE' | 'ACTION_UNKNOWN' | 'PROGRESS_CHANNEL_UNAVAILABLE' | 'SPEND_CAP_EXCEEDED';
/** Every code a supervision can end with. */
export type OutcomeCode = TimeoutCode | FailureCode | RefusalCode | 'CANCELLED';

/** The fields every outcome carries, null where they do not apply. */
export interface OutcomeFields {
  /** The logical action, its timeout mode and the sha256 of its verified descriptor. */
  readonly action: string | null;
  readonly timeoutMode: TimeoutMode | null;
  readonly descriptorSha256: string | null;
  /** The provider's own exit status (128 + n when a signal ended it), when it exited. */
  readonly childExitCode: number | null;
  /** The signal that ended the provider, if one did. */
  readonly signal: string | null;
  /** The signal that cancelled the supervision (its reason), for CANCELLED. */
  readonly cancelSignal: string | null;
  /** The errno of a launch that failed (ENOENT, EACCES...). */
  readonly spawnError: string | null;
  /** The tool that broke the spec's tool policy, for TOOL_DENIED. */
  readonly deniedTool: string | null;
  readonly providerStarted: boolean;
  readonly attempts: 0 | 1;
  readonly marks: number;
  readonly durationMs: number;
  readonly cleanupConfirmed: boolean;
  readonly timedOut: boolean;
  readonly leaseExpired: boolean;
  readonly cancelled: boolean;
  /** How late the expiry timer fired, in ms (timeouts only). */
  readonly expiryLateMs: number | null;
  /** From the expiry (or failure) to the first signal sent to the tree, in ms. */
  readonly firstSignalMs: number | null;
  /** From the expiry (or failure) to the tree proven gone, in ms. */
  readonly goneMs: number | null;
  /** What the provider's own stream said (session, final text, usage, cost), for a preset's call. */
  readonly provider: ProviderFacts | null;
  /**
   * The last lines of the child's stderr (escaped, bounded: stderr-tail.ts), oldest first;
   * empty for a call that never spawned, wrote none, or whose stderr its supervisor never read.
   */
  readonly stderrTail: readonly string[];
}

/**
 * The one outcome shape, for success, failure and refusal alike: a union keyed on
 * `status`, whose `code` is narrowed by it. The first cause wins. The exit status laneward
 * prints is not part of it: only the CLI turns a code into one (formats/codes/exit-status.ts).
 */
export type Outcome = OutcomeFields &
  (
    | { readonly status: 'ok'; readonly code: null }
    | { readonly status: 'failed'; readonly code: FailureCode }
    | { readonly status: 'timeout'; readonly code: TimeoutCode }
    | { readonly status: 'cancelled'; readonly code: 'CANCELLED' }
    | { readonly status: 'refused'; readonly code: RefusalCode }
  );

type OutcomeStatus = Outcome['status'];

const STATUS_OF: Record<OutcomeCode, Exclude<OutcomeStatus, 'ok'>> = {
  DEADLINE_EXPIRED: 'timeout',
  LEASE_EXPIRED: 'timeout',
  POST_PROVIDER_TIMEOUT: 'timeout',
  PROVIDER_NO_START: 'timeout',
  PROVIDER_NO_EXIT: 'failed',
  PROVIDER_RATE_LIMITED: 'failed',
  CHILD_FAILED: 'failed',
  COMMAND_NOT_FOUND: 'failed',
  COMMAND_NOT_EXECUTABLE: 'failed',
  SPAWN_FAILED: 'failed',
  PROGRESS_CHANNEL_LOST: 'failed',
  PROGRESS_INVALID: 'failed',
  OUTPUT_LIMIT: 'failed',
  TOOL_DENIED: 'failed',
  TEARDOWN_UNPROVEN: 'failed',
  DESCRIPTOR_INVALID: 'refused',
  TRUST_KEY_UNUSABLE: 'refused',
  ACTION_UNKNOWN: 'refused',
  PROGRESS_CHANNEL_UNAVAILABLE: 'refused',
  SPEND_CAP_EXCEEDED: 'refused',
  CANCELLED: 'cancelled',
};

/** What the engine knows at the end; everything else is derived here, once. */
export type OutcomeFacts = Omit<OutcomeFields, 'timedOut' | 'leaseExpired' | 'cancelled' | 'provider' | 'stderrTail'> & {
  readonly code: OutcomeCode | null;
  readonly provider?: ProviderFacts | null;
  /** Absent: none read (a refusal, an adoption, a call that never spawned). */
  readonly stderrTail?: readonly string[];
};

/** Builds the outcome: the status follows from the code, the flags from the status. */
export function buildOutcome(facts: OutcomeFacts): Outcome {
  const { code, ...fields } = facts;
  const status = code === null ? 'ok' : STATUS_OF[code];
  return {
    ...fields,
    provider: facts.provider ?? null,
    stderrTail: facts.stderrTail ?? [],
    status,
    code,
    timedOut: status === 'timeout',
    leaseExpired: code === 'LEASE_EXPIRED',
    cancelled: status === 'cancelled',
  } as Outcome;
}

/** The outcome of an attempt refused before anything was spawned (a descriptor that failed). */
export function refusedOutcome(code: RefusalCode, action: string | null, startedAt: number): Outcome {
  return buildOutcome({
    code,
    action,
    timeoutMode: null,
    descriptorSha256: null,
    childExitCode: null,
    signal: null,
    cancelSignal: null,
    spawnError: null,
    deniedTool: null,
    providerStarted: false,
    attempts: 0,
    marks: 0,
    durationMs: nowMs() - startedAt,
    cleanupConfirmed: true,
    expiryLateMs: null,
    firstSignalMs: null,
    goneMs: null,
  });
}

/**
 * Whether the provider's work finished, so its result stands: a clean end, or a provider
 * that wrote its terminal event and then had to be torn down because it did not exit.
 */
export function finishedWork(outcome: Outcome): boolean {
  return outcome.status === 'ok' || outcome.code === 'PROVIDER_NO_EXIT';
}
