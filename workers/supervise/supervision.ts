import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { errnoCode } from '../../formats/codes/error.ts';
import { TreeCensus } from './census.ts';
import { cause, type Cause } from './cause.ts';
import { streamEnd } from './child-stdio.ts';
import { DeadlineTimer, nowMs } from './monotonic-timer.ts';
import type { Outcome } from './outcome.ts';
import { readProgressChannel } from './progress-channel.ts';
import { supervisionOutcome } from './supervision-end.ts';
import { ProcSnapshots } from './proc-snapshot.ts';
import { canRun, readProcStat, statScratch } from './proc-stat.ts';
import { signalExitCode } from './process-group.ts';
import { spawnProvider, TREE_VAR } from './spawn-provider.ts';
import { ProviderOutput } from './provider-output.ts';
import { ProviderTimers } from './provider-timers.ts';
import type { OrphanRef, SupervisionHooks, SupervisionSpec } from './spec.ts';
import { teardownTree, type TeardownResult } from './teardown.ts';
import { censusOf, endOf } from './adopt.ts';
import { envNeedle, envValue } from './find-by-env.ts';
import { randomBytes } from 'node:crypto';
import { onAbort } from './on-abort.ts';
import { OutputFiles } from './output-files.ts';

/** After a failure's teardown, how long the leader's own exit is awaited before reporting. */
const LEADER_EXIT_WAIT_MS = 1_000;

/**
 * One supervision of one provider call, from launch (or adoption of an orphan whose output
 * went to a file) to its outcome: see {@link supervise} in supervise.ts for the contract.
 */
export class Supervision {
  private readonly spec: SupervisionSpec;
  private readonly hooks: SupervisionHooks;
  private readonly cancel: AbortSignal | undefined;
  /** The provider's stdout and stderr: limits, lines, tracker, tool guard, stream facts. */
  private readonly output: ProviderOutput;
  /** PROVIDER_NO_START, PROVIDER_NO_EXIT and the census's tracking, while the provider runs. */
  private readonly timers: ProviderTimers;
  /**
   * A preset's CLI and its descendants carry this in their environment (TREE_VAR): the
   * census finds by it a descendant that left for a session of its own and lost its parent
   * before the census saw it (see TreeCensus).
   */
  private readonly treeTag: string | undefined;
  /** The provider's stdout and stderr files: the sinks it is given, the followers that read them. */
  private readonly files: OutputFiles;
  /** Stops looking at an adopted orphan in /proc. */
  private readonly unlook = new AbortController();
  private readonly snapshots: ProcSnapshots;
  private child: ChildProcess | undefined;
  private census: TreeCensus | undefined;
  private timer: DeadlineTimer | undefined;
  private cause: Cause | undefined;
  private cancelSignal: string | null = null;
  private spawnError: string | null = null;
  private teardown: Promise<TeardownResult> | undefined;
  private teardownStartedAt: number | null = null;
  private fdMarks = 0;
  /** EOF on the progress pipe while the provider had not yet been seen to exit. */
  private channelClosed = false;
  private exited = false;
  private childExitCode: number | null = null;
  private signal: string | null = null;
  /** When the chunk being handled was read: a renewal's latency runs from here. */
  private readAt = 0;
  private leaderExit: Promise<void> | undefined;
  private readonly onAbort = () => this.fail(this.cancelled());

  constructor(spec: SupervisionSpec, hooks: SupervisionHooks, cancel: AbortSignal | undefined) {
    this.spec = spec;
    this.hooks = hooks;
    this.cancel = cancel;
    this.snapshots = hooks.snapshots ?? new ProcSnapshots();
    this.files = new OutputFiles(spec);
    this.timers = new ProviderTimers(spec, (code) => this.fail(cause(code)), () => this.exited);
    this.output = new ProviderOutput(spec, hooks, {
      fail: (code) => this.fail(cause(code)),
      mark: () => this.renew(),
      awaitingStart: () => this.timers.awaitingStart,
      started: () => this.started(),
      terminal: () => this.terminal(),
    });
    this.treeTag = spec.provider === undefined ? undefined : randomBytes(12).toString('base64url');
  }

  async run(): Promise<Outcome> {
    const { spec } = this;
    // An adopted orphan under a lease gets one lease from its adoption: nobody saw when its
    // marks came, only that they are in its stream (each renews it again as it is read).
    const leased = spec.adopt !== undefined && spec.mode === 'admitted_progress_inactivity';
    const firstDeadline = leased ? nowMs() + spec.timeoutMs : spec.startedAt + spec.timeoutMs - spec.cleanupReserveMs;
    // Cancellation wins over everything, an expired budget included.
    if (this.cancel?.aborted) return this.outcome(this.cancelled(), false, true);
    // An orphan past its deadline runs all the same: it is adopted, and torn down at once.
    if (nowMs() >= firstDeadline && spec.adopt === undefined) return this.outcome(cause('DEADLINE_EXPIRED'), false, true);
    // An action that leaves progress to the preset, for a call that runs none, renews on nothing.
    if (spec.progress === 'preset' && spec.provider === undefined) return this.outcome(cause('DESCRIPTOR_INVALID'), false, true);
    // Listening from here to the end: a cancel during launch or while output drains wins too.
    const unlink = this.cancel === undefined ? () => undefined : onAbort(this.cancel, this.onAbort);
    try {
      try {
        this.files.openSinks();
      } catch (error) {
        this.spawnError = errnoCode(error) ?? 'UNKNOWN';
        return await this.outcome(cause('SPAWN_FAILED'), false, true);
      }
      return await this.supervise(firstDeadline);
    } finally {
      unlink();
      this.files.closeSinks();
      this.files.stop();
      this.unlook.abort();
    }
  }

  private cancelled(): Cause {
    const reason = this.cancel?.reason;
    this.cancelSignal = typeof reason === 'string' && reason.startsWith('SIG') ? reason : 'SIGTERM';
    return cause('CANCELLED');
  }

  private async supervise(firstDeadline: number): Promise<Outcome> {
    const { spec } = this;
    const started = spec.adopt === undefined ? await this.launch() : this.attach(spec.adopt);
    if (started === 'gone') {
      // It ended before it was adopted: what it wrote is its whole stream.
      this.drainFollowers();
      return this.outcome(undefined, true, true);
    }
    if (started !== true) return this.outcome(started, false, true);
    // A cancel that arrived while the spawn was under way finds the child only now.
    if (this.cause !== undefined) this.startTeardown();
    else {
      this.timer = new DeadlineTimer(firstDeadline, (late) => this.expire(late));
    }
    const pipes = this.child?.stdio.filter((s): s is Readable => s !== null && s !== undefined && 'read' in s) ?? [];
    const exited = this.leaderExit!;
    // A followed file has no EOF: its output is whole once no member of the tree is left to write.
    const drained = () => Promise.all([...pipes.map(streamEnd), ...(this.files.followed && this.teardown !== undefined ? [this.teardown] : [])]);

    // Wait for the provider to exit by itself, or for a failure's teardown to end it.
    await Promise.race([exited, this.failed.then(() => Promise.race([exited, this.teardown!.then(() => delay(LEADER_EXIT_WAIT_MS))]))]);
    this.timer?.clear();

    let cleanupConfirmed: boolean;
    if (this.cause === undefined) {
      // The provider finished: its tree (background descendants) goes too, and the
      // output drains within one fresh post-provider budget (a cancel still wins).
      this.startTeardown();
      const end = await Promise.race([drained().then(() => 'drained'), delay(spec.postProviderMs).then(() => 'late'), this.failed.then(() => 'failed')]);
      if (end === 'late') this.fail(cause('POST_PROVIDER_TIMEOUT'));
      cleanupConfirmed = (await this.teardown!).confirmed;
    } else {
      cleanupConfirmed = (await this.teardown!).confirmed;
      await Promise.race([drained(), delay(spec.postProviderMs)]);
    }
    this.drainFollowers();
    for (const stream of this.child?.stdio ?? []) stream?.destroy();
    if (this.cause === undefined && !cleanupConfirmed) return this.outcome(cause('TEARDOWN_UNPROVEN'), true, false);
    return this.outcome(this.cause, true, cleanupConfirmed);
  }

  /**
   * Takes an orphan a supervisor that died started, instead of spawning: its tree (found
   * with the tag its environment carries), its exit seen in /proc, its stream followed
   * from the file's start. 'gone' when it no longer runs.
   */
  private attach(ref: OrphanRef): true | 'gone' {
    const tag = envValue(ref.pid, TREE_VAR);
    const census = censusOf(ref, this.snapshots, tag === undefined ? undefined : envNeedle(TREE_VAR, tag));
    this.exited = census === undefined;
    this.follow();
    if (census === undefined) return 'gone';
    this.census = census;
    this.leaderExit = endOf(ref, this.unlook.signal).then(() => {
      this.exited = true;
      this.timer?.clear();
      this.timers.clear();
    });
    this.timers.begin(() => this.census);
    return true;
  }

  /** Follows the provider's output files, from their start. */
  private follow(): void {
    try {
      this.files.follow((chunk) => this.onStdout(chunk), (chunk) => this.onStderr(chunk));
    } catch (error) {
      // Replaced under us (a link where the file was): nothing it writes could be read.
      this.spawnError = errnoCode(error) ?? 'UNKNOWN';
      this.fail(cause('SPAWN_FAILED'));
    }
  }

  /** The output files are read to their end (no writer is left), a last line without its newline included. */
  private drainFollowers(): void {
    this.files.drain();
    this.output.end();
  }

  /** Spawns the provider; resolves true once it runs, or the cause it could not start. */
  private async launch(): Promise<true | Cause> {
    const { spec } = this;
    const started = await spawnProvider(spec, this.files.sinks, this.treeTag, {
      onChild: (child) => (this.child = child),
      onSpawn: (child) => {
        this.census = new TreeCensus(child.pid!, this.snapshots, this.treeTag === undefined ? undefined : envNeedle(TREE_VAR, this.treeTag));
        this.watch(child);
        const budgetLeftMs = Math.max(0, spec.startedAt + spec.timeoutMs - spec.cleanupReserveMs - nowMs());
        this.timers.begin(() => this.census);
        this.hooks.onSpawn?.(child.pid!, { pid: child.pid!, ticks: this.census.leaderStart ?? null, budgetLeftMs });
      },
    }).finally(() => {
      // The child holds its own copies of the output files' descriptors (or never will).
      this.files.closeSinks();
    });
    if (started === true) return true;
    this.spawnError = started.errno;
    return cause(started.code);
  }

  private watch(child: ChildProcess): void {
    this.leaderExit = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.exited = true;
        this.signal = signal;
        this.childExitCode = code ?? signalExitCode(signal ?? 'SIGKILL');
        // A total deadline ends with the provider; a lease is not needed once it exited.
        this.timer?.clear();
        this.timers.clear();
        resolve();
      }),
    );
    child.stdout?.on('data', (chunk: Buffer) => this.onStdout(chunk));
    child.stderr?.on('data', (chunk: Buffer) => this.onStderr(chunk));
    this.follow();
    const progress = child.stdio[3] as Readable | undefined;
    if (progress === undefined || progress === null) return;
    readProgressChannel(progress, {
      marks: (count, readAt) => {
        this.readAt = readAt;
        this.started();
        this.fdMarks += count;
        this.renew();
      },
      invalid: (readAt) => {
        this.readAt = readAt;
        this.fail(cause('PROGRESS_INVALID'));
      },
      closed: () => {
        if (!this.exited) this.channelClosed = true;
      },
    });
  }

  private onStdout(chunk: Buffer): void {
    this.readAt = nowMs();
    this.output.stdout(chunk);
  }

  private onStderr(chunk: Buffer): void {
    this.output.stderr(chunk);
  }

  /** The budget ran out: the lease or the deadline, or the channel closed before it ran out. */
  private expire(lateMs: number): void {
    if (!this.channelClosed) {
      this.fail(cause(this.spec.mode === 'admitted_progress_inactivity' ? 'LEASE_EXPIRED' : 'DEADLINE_EXPIRED', lateMs));
      return;
    }
    // Its exit may be waiting to be read behind a busy loop: a provider that has exited
    // (a zombie not yet reaped, or gone) closed its channel by exiting; the exit event follows.
    const stat = readProcStat(this.census?.leader ?? this.child!.pid!, statScratch());
    if (stat !== undefined && canRun(stat)) this.fail(cause('PROGRESS_CHANNEL_LOST', lateMs));
  }

  /** The first structured event: the provider started, PROVIDER_NO_START no longer applies. */
  private started(): void {
    this.timers.started();
  }

  /**
   * The provider's terminal event: its work is done. With an exit budget the lease stops
   * (nothing is left to make progress on) and the exit is awaited that long instead.
   */
  private terminal(): void {
    if (this.exited || this.cause !== undefined) return;
    if (this.timers.terminal()) this.timer?.clear();
  }

  /** An admitted mark: in lease mode the one timer moves to now + lease. */
  private renew(): void {
    if (this.cause !== undefined || this.exited || this.spec.mode !== 'admitted_progress_inactivity') return;
    const now = nowMs();
    this.timer?.rearm(now + this.spec.timeoutMs);
    this.hooks.onRenewal?.(now, now - this.readAt);
  }

  private failedResolve: (() => void) | undefined;
  /** Settles at the first failure. */
  private readonly failed = new Promise<void>((resolve) => (this.failedResolve = resolve));

  /** Records the first cause (later ones are consequences) and tears the tree down. */
  private fail(found: Cause): void {
    if (this.cause !== undefined) return;
    this.cause = found;
    this.timer?.clear();
    this.timers.clear();
    this.startTeardown();
    this.failedResolve?.();
  }

  private startTeardown(): void {
    if (this.teardown !== undefined || this.census === undefined) return;
    this.teardownStartedAt = nowMs();
    this.teardown = teardownTree(this.census, {
      graceMs: this.spec.graceMs,
      budgetMs: this.spec.teardownMs,
      ...(this.leaderExit === undefined ? {} : { leaderExit: this.leaderExit }),
    });
  }

  private async outcome(found: Cause | undefined, started: boolean, cleanupConfirmed: boolean): Promise<Outcome> {
    return supervisionOutcome({
      spec: this.spec,
      found,
      started,
      cleanupConfirmed,
      teardown: this.teardown === undefined ? undefined : await this.teardown,
      teardownStartedAt: this.teardownStartedAt,
      provider: this.output.facts(),
      childExitCode: this.childExitCode,
      signal: this.signal,
      cancelSignal: this.cancelSignal,
      spawnError: this.spawnError,
      deniedTool: this.output.deniedTool,
      marks: this.spec.progress === 'fd' ? this.fdMarks : this.output.marks,
      stderrTail: this.output.stderrTail(),
    });
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
