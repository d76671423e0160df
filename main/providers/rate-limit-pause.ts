import type { PresetName } from '../../formats/providers/names.ts';
import { MAX_RETRY_AFTER_S } from '../../formats/providers/stream-base.ts';
import { MAX_TIMER_MS } from '../../formats/supervision/limits.ts';
import type { Outcome } from '../../workers/supervise/outcome.ts';

/** The pause after a rate limit that named no retry-after. */
export const DEFAULT_RETRY_AFTER_S = 30;
/** Once this many calls may run at once again, the provider is no longer held back at all. */
const OPEN_ALLOWANCE = 64;

interface ProviderState {
  /** Epoch ms before which no new call of the provider starts. */
  pausedUntil: number;
  /** Calls that may run at once: 1 after a rate limit, doubled by each clean end, unlimited past {@link OPEN_ALLOWANCE}. */
  allowance: number;
  running: number;
  limits: number;
  readonly waiters: Set<() => void>;
}

/** One provider as a live view shows it. */
export interface PauseView {
  readonly provider: PresetName;
  readonly pausedUntil: string | null;
  readonly allowance: number | null;
  readonly running: number;
  readonly rateLimits: number;
}

/** One rate-limited provider in a crew's `--report`. */
export interface PauseReport {
  readonly provider: PresetName;
  readonly rate_limits: number;
  /** When the latest pause ended (or ends). */
  readonly paused_until: string;
  /** Calls it may run at once when the crew ended; null when no longer held back. */
  readonly allowance: number | null;
}

/**
 * A crew's admission of new calls per provider. A call that ends PROVIDER_RATE_LIMITED
 * pauses its provider until its retry-after (nothing that started is replayed: that call
 * is the lane's typed end); after the pause the provider's calls are admitted one at a
 * time, then twice as many after each clean end, so a quota reset does not meet every
 * waiting lane at once and fail them together. Calls of other providers never wait.
 */
export class RateLimitPause {
  private readonly states = new Map<PresetName, ProviderState>();
  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  private state(provider: PresetName): ProviderState {
    let state = this.states.get(provider);
    if (state === undefined) {
      state = { pausedUntil: 0, allowance: Infinity, running: 0, limits: 0, waiters: new Set() };
      this.states.set(provider, state);
    }
    return state;
  }

  /** Resolves once a new call of `provider` may start (counted as running), or once `cancel` aborts (not counted: returns false). */
  async admit(provider: PresetName, cancel?: AbortSignal): Promise<boolean> {
    const state = this.state(provider);
    for (;;) {
      if (cancel?.aborted) return false;
      const wait = state.pausedUntil - this.now();
      if (wait <= 0 && state.running < state.allowance) {
        state.running += 1;
        return true;
      }
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          state.waiters.delete(wake);
          cancel?.removeEventListener('abort', wake);
          resolve();
        };
        // Longer than a timer holds: wake at its limit and look again.
        const timer = wait > 0 ? setTimeout(wake, Math.min(wait, MAX_TIMER_MS)) : undefined;
        state.waiters.add(wake);
        cancel?.addEventListener('abort', wake, { once: true });
      });
    }
  }

  /**
   * Resolves once an admitted call may start now: a call admitted before a rate limit was
   * known, still waiting for its slot when the limit came, waits the pause out (holding its
   * slot: it is counted as running) rather than going out inside it. False on cancel.
   */
  async beforeStart(provider: PresetName, cancel?: AbortSignal): Promise<boolean> {
    const state = this.state(provider);
    for (;;) {
      if (cancel?.aborted) return false;
      const wait = state.pausedUntil - this.now();
      if (wait <= 0) return true;
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          cancel?.removeEventListener('abort', wake);
          resolve();
        };
        const timer = setTimeout(wake, Math.min(wait, MAX_TIMER_MS));
        cancel?.addEventListener('abort', wake, { once: true });
      });
    }
  }

  /** A call admitted by {@link admit} ended. */
  ended(provider: PresetName, outcome: Outcome): void {
    const state = this.state(provider);
    state.running = Math.max(0, state.running - 1);
    if (outcome.code === 'PROVIDER_RATE_LIMITED') {
      const named = outcome.provider?.rateLimit?.retryAfterS ?? DEFAULT_RETRY_AFTER_S;
      // A figure no date or timer can hold (NaN, Infinity, negative, years) pauses for the longest a stream may ask.
      const afterS = Number.isFinite(named) && named >= 0 ? Math.min(named, MAX_RETRY_AFTER_S) : MAX_RETRY_AFTER_S;
      state.pausedUntil = Math.max(state.pausedUntil, this.now() + afterS * 1000);
      state.allowance = 1;
      state.limits += 1;
    } else if (outcome.providerStarted && state.allowance !== Infinity && this.now() >= state.pausedUntil) {
      state.allowance = state.allowance * 2 > OPEN_ALLOWANCE ? Infinity : state.allowance * 2;
    }
    for (const wake of [...state.waiters]) wake();
  }

  /** Every provider that was rate limited during the crew, for its report: how often, and until when its latest pause ran. */
  report(): PauseReport[] {
    return [...this.states.entries()]
      .filter(([, s]) => s.limits > 0)
      .map(([provider, s]) => ({ provider, rate_limits: s.limits, paused_until: new Date(s.pausedUntil).toISOString(), allowance: s.allowance === Infinity ? null : s.allowance }));
  }

  view(): PauseView[] {
    const now = this.now();
    return [...this.states.entries()]
      .filter(([, s]) => s.limits > 0)
      .map(([provider, s]) => ({
        provider,
        pausedUntil: s.pausedUntil > now ? new Date(s.pausedUntil).toISOString() : null,
        allowance: s.allowance === Infinity ? null : s.allowance,
        running: s.running,
        rateLimits: s.limits,
      }));
  }
}
