import type { ResultCode } from '../../formats/codes.ts';

export type TimeoutMode = 'total_deadline' | 'admitted_progress_inactivity';
export type ProgressSource = 'fd' | 'step-lifecycle' | 'claude-stream-json' | 'codex-json' | 'jsonl-counter';

/** Everything one supervision needs; plain data so it crosses to a pool worker. */
export interface LeaseSpec {
  readonly argv: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  readonly mode: TimeoutMode;
  /** Where admitted progress comes from; null for a total-deadline action. */
  readonly progress: ProgressSource | null;
  /** The caller's budget: a total deadline, or the inactivity lease after launch. */
  readonly timeoutMs: number;
  /** Taken out of the budget before launch: the first mark must come within timeout - reserve. */
  readonly cleanupReserveMs: number;
  /** One fresh budget, once, for draining output after the provider exits. */
  readonly postProviderMs: number;
  /** SIGTERM to SIGKILL, during teardown. */
  readonly graceMs: number;
  /** Teardown's own budget. */
  readonly teardownMs: number;
  readonly stdoutLimit: number;
  readonly stderrLimit: number;
  /** Monotonic ms (process.hrtime) when the caller's budget began; pre-launch work counts. */
  readonly startedAt: number;
}

export type LeaseStatus = 'ok' | 'timeout' | 'failed' | 'cancelled' | 'refused';

/** One shape for success and failure; the first cause wins. */
export interface LeaseOutcome {
  readonly status: LeaseStatus;
  readonly code: ResultCode | null;
  /** The status laneward exits with. */
  readonly exitCode: number;
  /** The provider's own exit status, when it exited. */
  readonly childExitCode: number | null;
  readonly signal: string | null;
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
  /** From the expiry (or failure) to the first signal sent to the group, in ms. */
  readonly firstSignalMs: number | null;
  /** From the expiry (or failure) to the group proven gone, in ms. */
  readonly goneMs: number | null;
}

/** Where the provider's output and marks go while it runs. */
export interface LeaseHooks {
  readonly onStdout?: (chunk: Buffer) => void;
  readonly onStderr?: (chunk: Buffer) => void;
  /**
   * Called right after admitted progress renewed the lease, with the monotonic time of the
   * renewal: once per renewal, and one chunk or line may carry several marks.
   */
  readonly onRenewal?: (atMs: number) => void;
}

export const LEASE_DEFAULTS = {
  graceMs: 500,
  teardownMs: 5_000,
  stdoutLimit: 4 * 1024 * 1024,
  stderrLimit: 256 * 1024,
} as const;
