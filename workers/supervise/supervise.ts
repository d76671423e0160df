import type { ChildProcess, StdioOptions } from 'node:child_process';
import type { Readable } from 'node:stream';
import { errnoCode } from '../../formats/codes/error.ts';
import { JsonlLineSplitter } from '../../formats/jsonl/lines.ts';
import { TreeCensus } from './census.ts';
import { DeadlineTimer, nowMs } from './monotonic-timer.ts';
import { buildOutcome, type Outcome, type OutcomeCode } from './outcome.ts';
import { ProcSnapshots } from './proc-snapshot.ts';
import { canRun, readProcStat, statScratch } from './proc-stat.ts';
import { signalExitCode, spawnGroup } from './process-group.ts';
import type { OrphanRef, SupervisionHooks, SupervisionSpec } from './spec.ts';
import { teardownTree, type TeardownResult } from './teardown.ts';
import { ToolGuard } from './tool-guard.ts';
import { adoptOrphan, censusOf, endOf } from './adopt.ts';
import { envNeedle, envValue } from './find-by-env.ts';
import { randomBytes } from 'node:crypto';
import { onAbort } from './on-abort.ts';
import { StderrTail } from './stderr-tail.ts';
import { createTracker, type ProgressTracker } from './trackers/tracker.ts';
import { closeSync, existsSync, openSync } from 'node:fs';
import { openStreamSink, StreamFollower } from './stream-file.ts';
import { createStreamReader } from '../../formats/providers/stream-reader.ts';
import { streamEvent } from '../../formats/providers/stream-base.ts';
import { progressFor } from '../../formats/providers/presets.ts';
import type { StreamReader } from '../../formats/providers/facts.ts';

const MARK = 0x01;
/** How often a preset's tree is searched for children that left its session. */
const TRACK_MS = 200;
/** The variable a preset's CLI tree is tagged with (see Supervision.treeTag). */
export const TREE_VAR = 'LANEWARD_TREE';
/** After a failure's teardown, how long the leader's own exit is awaited before reporting. */
const LEADER_EXIT_WAIT_MS = 1_000;

interface Cause {
  readonly code: OutcomeCode;
  readonly at: number;
  readonly lateMs: number | null;
}

const cause = (code: OutcomeCode, lateMs: number | null = null): Cause => ({ code, at: nowMs(), lateMs });

/**
 * The one supervision engine: every provider attempt, reviewer and probe laneward runs
 * goes through it, in-process (the CLI, one at a time) or in a pool worker (many at once).
 *
 *     supervise(spec, signal?, hooks?) -> Promise<Outcome>
 *
 * - `spec` (plain data, {@link SupervisionSpec}): argv (no shell), env, cwd, stdio,
 *   timeout mode, progress source, budgets, and `startedAt` on the monotonic clock.
 * - `signal`: aborting it cancels; its reason names the signal (`'SIGINT'`), default
 *   SIGTERM. Cancellation wins over every other cause, in every phase.
 * - `hooks`: output, spawn and renewal callbacks, and the shared /proc snapshots.
 * - The promise never rejects for anything the provider does: spawn errors, timeouts,
 *   cancellation and teardown all end in an {@link Outcome}, one shape keyed on `status`.
 *
 * Before launch the caller's fixed total deadline holds (less the cleanup reserve). After
 * launch a total-deadline action keeps that deadline; an admitted-progress action turns
 * it into an inactivity lease that only admitted marks renew (a byte 0x01 on fd 3, or a
 * tracker's mark from stdout), with no wall-clock cap. Any failure tears the tree down
 * (SIGTERM, grace, SIGKILL, proven gone) under its own budget; so does the provider's own
 * exit, so background descendants never outlive it. After the provider exits, draining
 * its output gets one fresh budget. Exactly one spawn; nothing is ever retried.
 */
export function supervise(spec: SupervisionSpec, signal?: AbortSignal, hooks: SupervisionHooks = {}): Promise<Outcome> {
  // An orphan whose output went to a file is supervised like a child of ours, from that
  // file; one whose output nobody can read any more is only held to its deadline.
  if (spec.adopt !== undefined && (spec.stdoutFile === undefined || !existsSync(spec.stdoutFile))) return adoptOrphan(spec, spec.adopt, signal, hooks);
  return new Supervision(spec, hooks, signal).run();
}

class Supervision {
  private readonly spec: SupervisionSpec;
  private readonly hooks: SupervisionHooks;
  private readonly cancel: AbortSignal | undefined;
  private readonly tracker: ProgressTracker | undefined;
  private readonly guard: ToolGuard | undefined;
  private readonly reader: StreamReader | undefined;
  /** PROVIDER_NO_START's timer, until the first structured event; PROVIDER_NO_EXIT's after the terminal one. */
  private startTimer: NodeJS.Timeout | undefined;
  private exitTimer: NodeJS.Timeout | undefined;
  private terminalSeen = false;
  /** While a preset's CLI runs: the census looks for children it started in sessions of their own. */
  private tracking: NodeJS.Timeout | undefined;
  /**
   * A preset's CLI and its descendants carry this in their environment (TREE_VAR): the
   * census finds by it a descendant that left for a session of its own and lost its parent
   * before the census saw it (see TreeCensus).
   */
  private readonly treeTag: string | undefined;
  private deniedTool: string | null = null;
  /** The descriptors the provider's stdout and stderr files are written through, until it holds its own. */
  private sinkFds: number[] = [];
  /** Followers of the provider's output files (stdoutFile, stderrFile). */
  private readonly followers: StreamFollower[] = [];
  private splitter: JsonlLineSplitter | undefined;
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
  private stdoutBytes = 0;
  /** When the chunk being handled was read: a renewal's latency runs from here. */
  private readAt = 0;
  private stderrBytes = 0;
  /** The end of its stderr, for the call's record: a failure carries what the child said. */
  private readonly stderrTail = new StderrTail();
  private leaderExit: Promise<void> | undefined;
  private readonly onAbort = () => this.fail(this.cancelled());

  constructor(spec: SupervisionSpec, hooks: SupervisionHooks, cancel: AbortSignal | undefined) {
    this.spec = spec;
    this.hooks = hooks;
    this.cancel = cancel;
    this.snapshots = hooks.snapshots ?? new ProcSnapshots();
    const source = progressFor(spec.progress, spec.provider);
    this.tracker = source !== null && source !== 'fd' ? createTracker(source) : undefined;
    this.guard = spec.toolPolicy === undefined ? undefined : new ToolGuard(spec.toolPolicy);
    this.reader = spec.provider === undefined ? undefined : createStreamReader(spec.provider);
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
      if (spec.stdoutFile !== undefined && spec.adopt === undefined) {
        try {
          this.sinkFds.push(openStreamSink(spec.stdoutFile));
          if (spec.stderrFile !== undefined) this.sinkFds.push(openStreamSink(spec.stderrFile));
        } catch (error) {
          this.spawnError = errnoCode(error) ?? 'UNKNOWN';
          return await this.outcome(cause('SPAWN_FAILED'), false, true);
        }
      }
      return await this.supervise(firstDeadline);
    } finally {
      unlink();
      this.closeSinks();
      for (const follower of this.followers) follower.stop();
      this.unlook.abort();
    }
  }

  private closeSinks(): void {
    for (const fd of this.sinkFds) closeSync(fd);
    this.sinkFds = [];
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
    const drained = () => Promise.all([...pipes.map(streamEnd), ...(this.followers.length > 0 && this.teardown !== undefined ? [this.teardown] : [])]);

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
    const { spec } = this;
    const tag = envValue(ref.pid, TREE_VAR);
    const census = censusOf(ref, this.snapshots, tag === undefined ? undefined : envNeedle(TREE_VAR, tag));
    this.exited = census === undefined;
    this.follow();
    if (census === undefined) return 'gone';
    this.census = census;
    this.leaderExit = endOf(ref, this.unlook.signal).then(() => {
      this.exited = true;
      this.timer?.clear();
      this.clearProviderTimers();
    });
    if (spec.firstEventMs !== undefined) this.startTimer = setTimeout(() => this.fail(cause('PROVIDER_NO_START')), spec.firstEventMs);
    if (spec.provider !== undefined) this.tracking = setInterval(() => this.census?.track(), TRACK_MS);
    return true;
  }

  /** Follows the provider's output files, from their start. */
  private follow(): void {
    const { spec } = this;
    if (spec.stdoutFile === undefined) return;
    try {
      this.followers.push(new StreamFollower(spec.stdoutFile, (chunk) => this.onStdout(chunk)));
      if (spec.stderrFile !== undefined && existsSync(spec.stderrFile)) this.followers.push(new StreamFollower(spec.stderrFile, (chunk) => this.onStderr(chunk)));
    } catch (error) {
      // Replaced under us (a link where the file was): nothing it writes could be read.
      this.spawnError = errnoCode(error) ?? 'UNKNOWN';
      this.fail(cause('SPAWN_FAILED'));
    }
  }

  /** The output files are read to their end (no writer is left), a last line without its newline included. */
  private drainFollowers(): void {
    for (const follower of this.followers) follower.drain();
    this.splitter?.end();
  }

  /** Spawns the provider; resolves true once it runs, or the cause it could not start. */
  private launch(): Promise<true | Cause> {
    const { spec } = this;
    const fd = spec.progress === 'fd';
    let stdin: number | undefined;
    if (spec.stdinFile !== undefined) {
      try {
        stdin = openSync(spec.stdinFile, 'r');
      } catch (error) {
        this.spawnError = errnoCode(error) ?? 'UNKNOWN';
        return Promise.resolve(cause('SPAWN_FAILED'));
      }
    }
    // The child holds its own copy of the stdin descriptor once spawned (or never will).
    const closeStdin = () => {
      if (stdin !== undefined) closeSync(stdin);
      stdin = undefined;
    };
    return new Promise<true | Cause>((resolve) => {
      const refuse = (error: unknown) => resolve(this.launchFailure(error, fd));
      let child: ChildProcess;
      try {
        child = spawnGroup({
          argv: spec.argv,
          stdio: stdioFor(spec.stdio, fd, stdin, this.sinkFds),
          env: { ...process.env, ...spec.env, ...(fd ? { LANEWARD_PROGRESS_FD: '3', DENO_EXTRA_STDIO_FDS: '3' } : {}), ...(this.treeTag === undefined ? {} : { [TREE_VAR]: this.treeTag }) },
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
        this.census = new TreeCensus(child.pid!, this.snapshots, this.treeTag === undefined ? undefined : envNeedle(TREE_VAR, this.treeTag));
        this.watch(child);
        const budgetLeftMs = Math.max(0, spec.startedAt + spec.timeoutMs - spec.cleanupReserveMs - nowMs());
        if (spec.firstEventMs !== undefined) this.startTimer = setTimeout(() => this.fail(cause('PROVIDER_NO_START')), spec.firstEventMs);
        // Agent CLIs start each tool command with setsid: its only trace is its parent, and
        // only while that parent lives, so they are looked for while the CLI runs.
        if (spec.provider !== undefined) this.tracking = setInterval(() => this.census?.track(), TRACK_MS);
        this.hooks.onSpawn?.(child.pid!, { pid: child.pid!, ticks: this.census.leaderStart ?? null, budgetLeftMs });
        resolve(true);
      });
    }).finally(() => {
      closeStdin();
      // The child holds its own copies of the output files' descriptors (or never will).
      this.closeSinks();
    });
  }

  private launchFailure(error: unknown, fd: boolean): Cause {
    const errno = errnoCode(error) ?? 'UNKNOWN';
    this.spawnError = errno;
    if (fd && (errno === 'EMFILE' || errno === 'ENFILE')) return cause('PROGRESS_CHANNEL_UNAVAILABLE');
    if (errno === 'ENOENT') return cause('COMMAND_NOT_FOUND');
    if (errno === 'EACCES' || errno === 'ENOEXEC' || errno === 'EISDIR') return cause('COMMAND_NOT_EXECUTABLE');
    return cause('SPAWN_FAILED');
  }

  private watch(child: ChildProcess): void {
    this.leaderExit = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.exited = true;
        this.signal = signal;
        this.childExitCode = code ?? signalExitCode(signal ?? 'SIGKILL');
        // A total deadline ends with the provider; a lease is not needed once it exited.
        this.timer?.clear();
        this.clearProviderTimers();
        resolve();
      }),
    );
    child.stdout?.on('data', (chunk: Buffer) => this.onStdout(chunk));
    child.stderr?.on('data', (chunk: Buffer) => this.onStderr(chunk));
    this.follow();
    const progress = child.stdio[3] as Readable | undefined;
    if (progress === undefined || progress === null) return;
    progress.on('data', (chunk: Buffer) => {
      this.readAt = nowMs();
      for (let i = 0; i < chunk.length; i++) {
        if (chunk[i] !== MARK) return this.fail(cause('PROGRESS_INVALID'));
      }
      this.started();
      this.fdMarks += chunk.length;
      this.renew();
    });
    // EOF is no verdict of its own: a provider closes its fds as it exits, and its exit
    // event can be read long after the EOF on a loaded machine (a wall timer here failed
    // healthy providers). Nothing renews the lease after EOF, so the lease decides: a
    // provider that exits before it ends is fine, one still running then lost its channel.
    progress.once('end', () => {
      if (!this.exited) this.channelClosed = true;
    });
  }

  private onStdout(chunk: Buffer): void {
    const { spec } = this;
    this.readAt = nowMs();
    this.stdoutBytes += chunk.length;
    if (this.stdoutBytes > spec.stdoutLimit) return this.fail(cause('OUTPUT_LIMIT'));
    const reads = this.tracker !== undefined || this.guard !== undefined || this.reader !== undefined || spec.firstEventMs !== undefined;
    if (reads) (this.splitter ??= new JsonlLineSplitter((line) => this.feed(line))).push(chunk);
    this.hooks.onStdout?.(chunk);
  }

  private onStderr(chunk: Buffer): void {
    this.stderrBytes += chunk.length;
    this.stderrTail.push(chunk);
    if (this.stderrBytes > this.spec.stderrLimit) return this.fail(cause('OUTPUT_LIMIT'));
    this.hooks.onStderr?.(chunk);
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

  private feed(line: string | null): void {
    if (line === null) return;
    if (this.startTimer !== undefined && streamEvent(line) !== undefined) this.started();
    if (this.reader !== undefined) {
      this.reader.feed(line);
      if (this.reader.finished) this.terminal();
    }
    // The policy is checked first: a denied tool's line admits no mark.
    const denied = this.guard?.check(line);
    if (denied !== undefined) {
      this.deniedTool ??= denied;
      return this.fail(cause('TOOL_DENIED'));
    }
    if (this.tracker === undefined) return;
    const verdict = this.tracker.feed(line);
    if (verdict.kind === 'mark') this.renew();
    else if (verdict.kind === 'invalid') this.fail(cause('PROGRESS_INVALID'));
    else if (verdict.kind === 'terminal') this.terminal();
  }

  /** The first structured event: the provider started, PROVIDER_NO_START no longer applies. */
  private started(): void {
    if (this.startTimer !== undefined) clearTimeout(this.startTimer);
    this.startTimer = undefined;
  }

  /**
   * The provider's terminal event: its work is done. With an exit budget the lease stops
   * (nothing is left to make progress on) and the exit is awaited that long instead.
   */
  private terminal(): void {
    const ms = this.spec.exitAfterTerminalMs;
    if (this.terminalSeen || this.exited || this.cause !== undefined || ms === undefined) return;
    this.terminalSeen = true;
    this.timer?.clear();
    this.exitTimer = setTimeout(() => {
      if (!this.exited) this.fail(cause('PROVIDER_NO_EXIT'));
    }, ms);
  }

  private clearProviderTimers(): void {
    if (this.tracking !== undefined) clearInterval(this.tracking);
    this.tracking = undefined;
    if (this.startTimer !== undefined) clearTimeout(this.startTimer);
    if (this.exitTimer !== undefined) clearTimeout(this.exitTimer);
    this.startTimer = this.exitTimer = undefined;
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
    this.clearProviderTimers();
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
    const { spec } = this;
    const teardown = this.teardown === undefined ? undefined : await this.teardown;
    const at = found?.at ?? null;
    const provider = this.reader?.facts() ?? null;
    // An adopted orphan's exit status is not ours to read (it is not our child): its stream says how it ended.
    const exitFailed = spec.adopt === undefined ? this.childExitCode !== 0 : provider !== null && provider.finished && (provider.apiError !== null || provider.rateLimit !== null);
    const childFailed = found === undefined && exitFailed;
    // A CLI that failed on a rate limit is typed as one: the crew waits before it starts that provider again.
    const failedCode = provider?.rateLimit != null ? 'PROVIDER_RATE_LIMITED' : 'CHILD_FAILED';
    return buildOutcome({
      code: found?.code ?? (childFailed ? failedCode : null),
      provider,
      action: spec.action,
      timeoutMode: spec.mode,
      descriptorSha256: spec.descriptorSha256,
      childExitCode: this.childExitCode,
      signal: this.signal,
      cancelSignal: found?.code === 'CANCELLED' ? this.cancelSignal : null,
      spawnError: this.spawnError,
      deniedTool: found?.code === 'TOOL_DENIED' ? this.deniedTool : null,
      providerStarted: started,
      // An adoption spawns nothing.
      attempts: started && spec.adopt === undefined ? 1 : 0,
      marks: spec.progress === 'fd' ? this.fdMarks : (this.tracker?.marks ?? 0),
      durationMs: nowMs() - spec.startedAt,
      cleanupConfirmed,
      expiryLateMs: found?.lateMs ?? null,
      // A teardown that began before the failure (after the provider exited) counts as 0.
      firstSignalMs: at !== null && this.teardownStartedAt !== null && teardown?.firstSignal ? Math.max(0, this.teardownStartedAt - at) : null,
      stderrTail: this.stderrTail.lines(),
      goneMs:
        at !== null && teardown?.confirmed === true && this.teardownStartedAt !== null
          ? Math.max(0, this.teardownStartedAt + teardown.durationMs - at)
          : null,
    });
  }
}

/**
 * The child's stdio: stdin the prompt file's descriptor when given, else closed (piped) or
 * inherited; stdout and stderr the output files' descriptors when given (`sinks`), else piped or inherited.
 */
function stdioFor(stdio: SupervisionSpec['stdio'], fd: boolean, stdin: number | undefined, sinks: readonly number[]): StdioOptions {
  const out = stdio === 'inherit' ? 'inherit' : 'pipe';
  const input = stdin ?? (stdio === 'inherit' ? 'inherit' : 'ignore');
  const stdout = sinks[0] ?? out;
  // A stdout file without a stderr file: stderr still comes through a pipe.
  const stderr = sinks[1] ?? out;
  return fd ? [input, stdout, stderr, 'pipe'] : [input, stdout, stderr];
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
