import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import type { ResultCode } from '../../formats/codes.ts';
import { errnoCode } from '../../formats/error.ts';
import { JsonlLineSplitter } from '../../formats/jsonl-lines.ts';
import type { LeaseHooks, LeaseOutcome, LeaseSpec, LeaseStatus } from './lease-types.ts';
import { DeadlineTimer, nowMs } from './monotonic-timer.ts';
import { signalExitCode, spawnGroup } from './process-group.ts';
import { teardownGroup, type TeardownResult } from './teardown.ts';
import { createTracker, type ProgressTracker } from './trackers/tracker.ts';

const MARK = 0x01;
/** EOF on the progress pipe this close to the provider's exit is its exit, not a lost channel. */
const EOF_SETTLE_MS = 100;

interface Cause {
  readonly code: ResultCode;
  readonly status: LeaseStatus;
  readonly exitCode: number;
  readonly at: number;
  readonly lateMs: number | null;
}

const STATUS_OF: Partial<Record<ResultCode, { status: LeaseStatus; exitCode: number }>> = {
  DEADLINE_EXPIRED: { status: 'timeout', exitCode: 124 },
  LEASE_EXPIRED: { status: 'timeout', exitCode: 124 },
  POST_PROVIDER_TIMEOUT: { status: 'timeout', exitCode: 124 },
  PROGRESS_CHANNEL_UNAVAILABLE: { status: 'refused', exitCode: 3 },
  COMMAND_NOT_FOUND: { status: 'failed', exitCode: 127 },
  COMMAND_NOT_EXECUTABLE: { status: 'failed', exitCode: 126 },
};

/**
 * Supervises one provider attempt. Before launch the caller's fixed total deadline holds
 * (less the cleanup reserve). After launch a total-deadline action keeps that deadline; an
 * admitted-progress action turns it into an inactivity lease that only admitted marks
 * renew (a byte 0x01 on fd 3, or a tracker's mark from stdout), with no wall-clock cap.
 * Any failure tears the process group down (SIGTERM, grace, SIGKILL, proven gone) under
 * its own budget. After the provider exits, draining its output gets one fresh budget.
 * Exactly one spawn; nothing is ever retried.
 */
export function superviseLease(spec: LeaseSpec, hooks: LeaseHooks = {}, cancel?: AbortSignal): Promise<LeaseOutcome> {
  return new LeaseRun(spec, hooks, cancel).run();
}

class LeaseRun {
  private readonly spec: LeaseSpec;
  private readonly hooks: LeaseHooks;
  private readonly cancel: AbortSignal | undefined;
  private readonly tracker: ProgressTracker | undefined;
  private child: ChildProcess | undefined;
  private timer: DeadlineTimer | undefined;
  private cause: Cause | undefined;
  private teardown: Promise<TeardownResult> | undefined;
  private teardownStartedAt: number | null = null;
  private fdMarks = 0;
  private exited = false;
  private childExitCode: number | null = null;
  private signal: string | null = null;
  private stdoutBytes = 0;
  private stderrBytes = 0;
  private leaderExit: Promise<void> | undefined;
  private readonly onAbort = () => this.fail(cancelCode(this.cancel?.reason));

  constructor(spec: LeaseSpec, hooks: LeaseHooks, cancel: AbortSignal | undefined) {
    this.spec = spec;
    this.hooks = hooks;
    this.cancel = cancel;
    this.tracker = spec.progress !== null && spec.progress !== 'fd' ? createTracker(spec.progress) : undefined;
  }

  async run(): Promise<LeaseOutcome> {
    const { spec } = this;
    const firstDeadline = spec.startedAt + spec.timeoutMs - spec.cleanupReserveMs;
    // Cancellation wins over everything, an expired budget included.
    if (this.cancel?.aborted) return this.outcome(cancelCode(this.cancel.reason), false, true);
    if (nowMs() >= firstDeadline) return this.outcome({ code: 'DEADLINE_EXPIRED', ...STATUS_OF.DEADLINE_EXPIRED!, at: nowMs(), lateMs: null }, false, true);
    // Listening from here to the end: a cancel during launch or while output drains wins too.
    this.cancel?.addEventListener('abort', this.onAbort, { once: true });
    try {
      return await this.supervise(firstDeadline);
    } finally {
      this.cancel?.removeEventListener('abort', this.onAbort);
    }
  }

  private async supervise(firstDeadline: number): Promise<LeaseOutcome> {
    const { spec } = this;
    const started = await this.launch();
    if (started !== true) return this.outcome(started, false, true);
    // A cancel that arrived while the spawn was under way finds the child only now.
    if (this.cause !== undefined) this.startTeardown();
    else {
      this.timer = new DeadlineTimer(firstDeadline, (late) =>
        this.fail({ ...(spec.mode === 'admitted_progress_inactivity' ? leaseExpired() : deadlineExpired()), at: nowMs(), lateMs: late }),
      );
    }
    const child = this.child!;
    const exited = this.leaderExit!;
    const drained = Promise.all(child.stdio.filter((s): s is Readable => s !== null && s !== undefined && 'read' in s).map(streamEnd));

    // Wait for the provider to exit by itself, or for a failure's teardown to end it.
    await Promise.race([exited, this.failed.then(() => Promise.race([exited, this.teardown!.then(() => delay(1_000))]))]);
    this.timer?.clear();

    let cleanupConfirmed: boolean;
    if (this.cause === undefined) {
      // The provider finished: its group (background descendants) goes too, and the
      // output drains within one fresh post-provider budget (a cancel still wins).
      this.startTeardown();
      const end = await Promise.race([drained.then(() => 'drained'), delay(spec.postProviderMs).then(() => 'late'), this.failed.then(() => 'failed')]);
      if (end === 'late') this.fail({ code: 'POST_PROVIDER_TIMEOUT', ...STATUS_OF.POST_PROVIDER_TIMEOUT!, at: nowMs(), lateMs: null });
      cleanupConfirmed = (await this.teardown!).confirmed;
    } else {
      cleanupConfirmed = (await this.teardown!).confirmed;
      await Promise.race([drained, delay(spec.postProviderMs)]);
    }
    for (const stream of child.stdio) stream?.destroy();
    if (this.cause === undefined && !cleanupConfirmed) {
      return this.outcome({ code: 'TEARDOWN_UNPROVEN', status: 'failed', exitCode: 1, at: nowMs(), lateMs: null }, true, false);
    }
    return this.outcome(this.cause, true, cleanupConfirmed);
  }

  /** Spawns the provider; resolves true once it runs, or the cause it could not start. */
  private launch(): Promise<true | Cause> {
    const { spec } = this;
    const fd = spec.progress === 'fd';
    return new Promise((resolve) => {
      const refuse = (error: unknown) => resolve(launchFailure(error, fd));
      let child: ChildProcess;
      try {
        child = spawnGroup({
          argv: spec.argv,
          stdio: fd ? ['ignore', 'pipe', 'pipe', 'pipe'] : ['ignore', 'pipe', 'pipe'],
          env: { ...process.env, ...spec.env, ...(fd ? { LANEWARD_PROGRESS_FD: '3', DENO_EXTRA_STDIO_FDS: '3' } : {}) },
          ...(spec.cwd === undefined ? {} : { cwd: spec.cwd }),
        });
      } catch (error) {
        refuse(error);
        return;
      }
      this.child = child;
      // 'error' before 'spawn' is a launch failure; later ones (a failed kill) change nothing.
      child.on('error', (error) => {
        if (child.pid === undefined) refuse(error);
      });
      child.once('spawn', () => {
        this.watch(child);
        resolve(true);
      });
    });
  }

  private watch(child: ChildProcess): void {
    const { spec, hooks } = this;
    this.leaderExit = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.exited = true;
        this.signal = signal;
        this.childExitCode = code ?? signalExitCode(signal ?? 'SIGKILL');
        // A total deadline ends with the provider; a lease is not needed once it exited.
        this.timer?.clear();
        resolve();
      }),
    );
    const splitter = this.tracker === undefined ? undefined : new JsonlLineSplitter((line) => this.feed(line));
    child.stdout!.on('data', (chunk: Buffer) => {
      this.stdoutBytes += chunk.length;
      if (this.stdoutBytes > spec.stdoutLimit) return this.fail(outputLimit());
      splitter?.push(chunk);
      hooks.onStdout?.(chunk);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      this.stderrBytes += chunk.length;
      if (this.stderrBytes > spec.stderrLimit) return this.fail(outputLimit());
      hooks.onStderr?.(chunk);
    });
    const progress = child.stdio[3] as Readable | undefined;
    if (progress === undefined) return;
    progress.on('data', (chunk: Buffer) => {
      for (let i = 0; i < chunk.length; i++) {
        if (chunk[i] !== MARK) return this.fail(progressInvalid());
      }
      this.fdMarks += chunk.length;
      this.renew();
    });
    progress.once('end', () => {
      if (this.exited) return;
      setTimeout(() => {
        if (!this.exited) this.fail({ code: 'PROGRESS_CHANNEL_LOST', status: 'failed', exitCode: 1, at: nowMs(), lateMs: null });
      }, EOF_SETTLE_MS).unref();
    });
  }

  private feed(line: string | null): void {
    if (line === null || this.tracker === undefined) return;
    const verdict = this.tracker.feed(line);
    if (verdict.kind === 'mark') this.renew();
    else if (verdict.kind === 'invalid') this.fail(progressInvalid());
  }

  /** An admitted mark: in lease mode the one timer moves to now + lease. */
  private renew(): void {
    if (this.cause !== undefined || this.exited || this.spec.mode !== 'admitted_progress_inactivity') return;
    const now = nowMs();
    this.timer?.rearm(now + this.spec.timeoutMs);
    this.hooks.onRenewal?.(now);
  }

  private failedResolve: (() => void) | undefined;
  /** Settles at the first failure. */
  private readonly failed = new Promise<void>((resolve) => (this.failedResolve = resolve));

  /** Records the first cause (later ones are consequences) and tears the group down. */
  private fail(cause: Cause): void {
    if (this.cause !== undefined) return;
    this.cause = cause;
    this.timer?.clear();
    this.startTeardown();
    this.failedResolve?.();
  }

  private startTeardown(): void {
    if (this.teardown !== undefined || this.child?.pid === undefined) return;
    this.teardownStartedAt = nowMs();
    this.teardown = teardownGroup(this.child.pid, {
      graceMs: this.spec.graceMs,
      budgetMs: this.spec.teardownMs,
      ...(this.leaderExit === undefined ? {} : { leaderExit: this.leaderExit }),
    });
  }

  private async outcome(cause: Cause | undefined, started: boolean, cleanupConfirmed: boolean): Promise<LeaseOutcome> {
    const teardown = this.teardown === undefined ? undefined : await this.teardown;
    const at = cause?.at ?? null;
    const marks = this.spec.progress === 'fd' ? this.fdMarks : (this.tracker?.marks ?? 0);
    const ok = cause === undefined;
    const childFailed = ok && this.childExitCode !== 0;
    return {
      status: ok ? (childFailed ? 'failed' : 'ok') : cause.status,
      code: ok ? (childFailed ? 'CHILD_FAILED' : null) : cause.code,
      exitCode: ok ? this.childExitCode! : cause.exitCode,
      childExitCode: this.childExitCode,
      signal: this.signal,
      providerStarted: started,
      attempts: started ? 1 : 0,
      marks,
      durationMs: nowMs() - this.spec.startedAt,
      cleanupConfirmed,
      timedOut: cause?.status === 'timeout',
      leaseExpired: cause?.code === 'LEASE_EXPIRED',
      cancelled: cause?.status === 'cancelled',
      expiryLateMs: cause?.lateMs ?? null,
      // A teardown that began before the failure (after the provider exited) counts as 0.
      firstSignalMs: at !== null && this.teardownStartedAt !== null && teardown?.firstSignal ? Math.max(0, this.teardownStartedAt - at) : null,
      goneMs:
        at !== null && teardown?.confirmed === true && this.teardownStartedAt !== null
          ? Math.max(0, this.teardownStartedAt + teardown.durationMs - at)
          : null,
    };
  }
}

function leaseExpired(): Omit<Cause, 'at' | 'lateMs'> {
  return { code: 'LEASE_EXPIRED', ...STATUS_OF.LEASE_EXPIRED! };
}
function deadlineExpired(): Omit<Cause, 'at' | 'lateMs'> {
  return { code: 'DEADLINE_EXPIRED', ...STATUS_OF.DEADLINE_EXPIRED! };
}
function outputLimit(): Cause {
  return { code: 'OUTPUT_LIMIT', status: 'failed', exitCode: 1, at: nowMs(), lateMs: null };
}
function progressInvalid(): Cause {
  return { code: 'PROGRESS_INVALID', status: 'failed', exitCode: 1, at: nowMs(), lateMs: null };
}
function cancelCode(reason: unknown): Cause {
  const signal = typeof reason === 'string' && reason.startsWith('SIG') ? (reason as NodeJS.Signals) : 'SIGTERM';
  return { code: 'CANCELLED', status: 'cancelled', exitCode: signalExitCode(signal), at: nowMs(), lateMs: null };
}

function launchFailure(error: unknown, fd: boolean): Cause {
  const errno = errnoCode(error);
  const at = nowMs();
  if (fd && (errno === 'EMFILE' || errno === 'ENFILE')) return { code: 'PROGRESS_CHANNEL_UNAVAILABLE', ...STATUS_OF.PROGRESS_CHANNEL_UNAVAILABLE!, at, lateMs: null };
  if (errno === 'ENOENT') return { code: 'COMMAND_NOT_FOUND', ...STATUS_OF.COMMAND_NOT_FOUND!, at, lateMs: null };
  if (errno === 'EACCES' || errno === 'ENOEXEC' || errno === 'EISDIR') return { code: 'COMMAND_NOT_EXECUTABLE', ...STATUS_OF.COMMAND_NOT_EXECUTABLE!, at, lateMs: null };
  return { code: 'SPAWN_FAILED', status: 'failed', exitCode: 1, at, lateMs: null };
}

function streamEnd(stream: Readable): Promise<void> {
  return new Promise((resolve) => {
    if (stream.readableEnded || stream.destroyed) return resolve();
    stream.once('close', () => resolve());
    stream.once('end', () => resolve());
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
