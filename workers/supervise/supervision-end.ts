import type { ProviderFacts } from '../../formats/providers/facts.ts';
import type { Cause } from './cause.ts';
import { nowMs } from './monotonic-timer.ts';
import { buildOutcome, type Outcome } from './outcome.ts';
import type { SupervisionSpec } from './spec.ts';
import type { TeardownResult } from './teardown.ts';

/** What a supervision knows when it ends: the first cause, and what it saw of the child. */
export interface SupervisionEnd {
  readonly spec: SupervisionSpec;
  /** The first cause, or undefined when nothing failed (the child's own exit then decides). */
  readonly found: Cause | undefined;
  readonly started: boolean;
  readonly cleanupConfirmed: boolean;
  readonly teardown: TeardownResult | undefined;
  readonly teardownStartedAt: number | null;
  readonly provider: ProviderFacts | null;
  readonly childExitCode: number | null;
  readonly signal: string | null;
  readonly cancelSignal: string | null;
  readonly spawnError: string | null;
  readonly deniedTool: string | null;
  /** Admitted marks: fd 3's bytes for an `fd` action, else the tracker's. */
  readonly marks: number;
  /** The last lines of the child's stderr (see stderr-tail.ts). */
  readonly stderrTail: readonly string[];
}

/** The {@link Outcome} of a supervision that ended so; durationMs counts to now. */
export function supervisionOutcome(end: SupervisionEnd): Outcome {
  const { spec, found, teardown, teardownStartedAt, provider } = end;
  const at = found?.at ?? null;
  // An adopted orphan's exit status is not ours to read (it is not our child): its stream says how it ended.
  const exitFailed = spec.adopt === undefined ? end.childExitCode !== 0 : provider !== null && provider.finished && (provider.apiError !== null || provider.rateLimit !== null);
  const childFailed = found === undefined && exitFailed;
  // A CLI that failed on a rate limit is typed as one: the crew waits before it starts that provider again.
  const failedCode = provider?.rateLimit != null ? 'PROVIDER_RATE_LIMITED' : 'CHILD_FAILED';
  return buildOutcome({
    code: found?.code ?? (childFailed ? failedCode : null),
    provider,
    action: spec.action,
    timeoutMode: spec.mode,
    descriptorSha256: spec.descriptorSha256,
    childExitCode: end.childExitCode,
    signal: end.signal,
    cancelSignal: found?.code === 'CANCELLED' ? end.cancelSignal : null,
    spawnError: end.spawnError,
    deniedTool: found?.code === 'TOOL_DENIED' ? end.deniedTool : null,
    providerStarted: end.started,
    // An adoption spawns nothing.
    attempts: end.started && spec.adopt === undefined ? 1 : 0,
    marks: end.marks,
    durationMs: nowMs() - spec.startedAt,
    cleanupConfirmed: end.cleanupConfirmed,
    expiryLateMs: found?.lateMs ?? null,
    // A teardown that began before the failure (after the provider exited) counts as 0.
    firstSignalMs: at !== null && teardownStartedAt !== null && teardown?.firstSignal ? Math.max(0, teardownStartedAt - at) : null,
    stderrTail: end.stderrTail,
    goneMs: at !== null && teardown?.confirmed === true && teardownStartedAt !== null ? Math.max(0, teardownStartedAt + teardown.durationMs - at) : null,
  });
}
