import type { ProgressSource, TimeoutMode } from '../../formats/supervision/modes.ts';
import type { ToolPolicy } from '../../formats/supervision/tool-policy.ts';
import type { ProcSnapshots } from './proc-snapshot.ts';
import type { PresetName } from '../../formats/providers/names.ts';

/**
 * Everything one supervision needs; plain data, so it crosses to a pool worker. The
 * deadline guard and a lease are the same engine: the guard is a total-deadline spec
 * with zero grace and inherited stdio.
 */
export interface SupervisionSpec {
  readonly argv: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /**
   * `pipe`: the provider's stdout and stderr come to the supervisor (hooks, limits,
   * trackers). `inherit`: they are the supervisor's own, untouched (the guard).
   */
  readonly stdio: 'pipe' | 'inherit';
  readonly mode: TimeoutMode;
  /** Where admitted progress comes from; null for a total-deadline action. */
  readonly progress: ProgressSource | null;
  /** The caller's budget: a total deadline, or the inactivity lease after launch. */
  readonly timeoutMs: number;
  /** Taken out of the budget before launch: the first mark must come within timeout - reserve. */
  readonly cleanupReserveMs: number;
  /** One fresh budget, once, for draining output after the provider exits. */
  readonly postProviderMs: number;
  /** SIGTERM to SIGKILL, during teardown; 0 sends SIGKILL at once. */
  readonly graceMs: number;
  /** Teardown's own budget. */
  readonly teardownMs: number;
  readonly stdoutLimit: number;
  readonly stderrLimit: number;
  /** Monotonic ms (nowMs) when the caller's budget began; pre-launch work counts. */
  readonly startedAt: number;
  /** The logical action this runs as, and the sha256 of its verified descriptor (null for the guard). */
  readonly action: string | null;
  readonly descriptorSha256: string | null;
  /**
   * Tools the provider may use, read from the tool events its stdout names: the first
   * tool outside the policy ends the call (TOOL_DENIED). Needs `stdio: 'pipe'`.
   */
  readonly toolPolicy?: ToolPolicy;
  /**
   * The file the provider's stdout is written to (created or truncated at launch), instead
   * of a pipe: the provider holds the descriptor, so its stream outlives a supervisor that
   * dies, and whoever adopts it (`adopt`) follows the same file from its start. The
   * supervisor follows it as it grows (trackers, tool policy, stream facts, stdoutLimit).
   */
  readonly stdoutFile?: string;
  /** With `stdoutFile`: the file the provider's stderr is written to, likewise (stderrLimit). */
  readonly stderrFile?: string;
  /**
   * Supervise a process a driver that died started (an orphan), instead of spawning:
   * named by pid and start time. Nothing is spawned; its budget runs from `startedAt`.
   */
  readonly adopt?: OrphanRef;
  /** A file the provider reads as its stdin (the prompt, never through argv); else stdin is closed. */
  readonly stdinFile?: string;
  /** PROVIDER_NO_START when no structured event came within this many ms of the spawn. */
  readonly firstEventMs?: number;
  /** PROVIDER_NO_EXIT when the provider has not exited this many ms after its terminal event. */
  readonly exitAfterTerminalMs?: number;
  /** The CLI whose stream is read for its session, final text, usage, cost and rate limits. */
  readonly provider?: PresetName;
  /** The model a preset was asked for: prices its tokens when its stream gives no cost. */
  readonly model?: string;
}

/** A process to adopt: pid and start time (clock ticks after boot, /proc/<pid>/stat field 22). */
export interface OrphanRef {
  readonly pid: number;
  readonly ticks: number;
}

/** The child a supervision spawned, as its supervisor reports it to whoever journals it. */
export interface SpawnedChild {
  readonly pid: number;
  /** Its start time (field 22); null where /proc cannot tell. */
  readonly ticks: number | null;
  /** What is left of its first budget (the deadline, or the first lease) at the spawn, in ms. */
  readonly budgetLeftMs: number;
}

/** Where the provider's output and marks go while it runs; all optional. */
export interface SupervisionHooks {
  readonly onStdout?: (chunk: Buffer) => void;
  readonly onStderr?: (chunk: Buffer) => void;
  /** Called once the provider runs, with its pid (which leads its group and session). */
  readonly onSpawn?: (pid: number, child: SpawnedChild) => void;
  /**
   * Called right after admitted progress renewed the lease, with the monotonic time of the
   * renewal: once per renewal, and one chunk or line may carry several marks.
   * `latencyMs` runs from the moment the chunk carrying the mark was read to the re-arm.
   */
  readonly onRenewal?: (atMs: number, latencyMs: number) => void;
  /**
   * Where this supervision reads /proc from. Supervisions that share one read one
   * snapshot per event-loop turn; without it the supervision has its own.
   */
  readonly snapshots?: ProcSnapshots;
}

export const SUPERVISION_DEFAULTS = {
  graceMs: 500,
  teardownMs: 5_000,
  stdoutLimit: 4 * 1024 * 1024,
  stderrLimit: 256 * 1024,
} as const;
