import type { TreeCensus } from './census.ts';
import type { SupervisionSpec } from './spec.ts';

/** How often a preset's tree is searched for children that left its session. */
const TRACK_MS = 200;

/**
 * The timers that run only while the provider does: PROVIDER_NO_START until its first
 * structured event, PROVIDER_NO_EXIT from its terminal event, and the census's search
 * for children a preset's CLI started in sessions of their own.
 */
export class ProviderTimers {
  private startTimer: NodeJS.Timeout | undefined;
  private exitTimer: NodeJS.Timeout | undefined;
  private terminalSeen = false;
  private tracking: NodeJS.Timeout | undefined;

  constructor(
    private readonly spec: SupervisionSpec,
    private readonly fail: (code: 'PROVIDER_NO_START' | 'PROVIDER_NO_EXIT') => void,
    private readonly exited: () => boolean,
  ) {}

  /** The provider runs (spawned or adopted): the start timer and the tree's tracking begin. */
  begin(census: () => TreeCensus | undefined): void {
    const { spec } = this;
    if (spec.firstEventMs !== undefined) this.startTimer = setTimeout(() => this.fail('PROVIDER_NO_START'), spec.firstEventMs);
    // Agent CLIs start each tool command with setsid: its only trace is its parent, and
    // only while that parent lives, so they are looked for while the CLI runs.
    if (spec.provider !== undefined) this.tracking = setInterval(() => census()?.track(), TRACK_MS);
  }

  /** Whether the first structured event is still awaited. */
  get awaitingStart(): boolean {
    return this.startTimer !== undefined;
  }

  /** The first structured event: the provider started, PROVIDER_NO_START no longer applies. */
  started(): void {
    if (this.startTimer !== undefined) clearTimeout(this.startTimer);
    this.startTimer = undefined;
  }

  /**
   * The provider's terminal event, the first time: with an exit budget its exit is awaited
   * that long. True when that budget now runs (the caller's lease then stops).
   */
  terminal(): boolean {
    const ms = this.spec.exitAfterTerminalMs;
    if (this.terminalSeen || ms === undefined) return false;
    this.terminalSeen = true;
    this.exitTimer = setTimeout(() => {
      if (!this.exited()) this.fail('PROVIDER_NO_EXIT');
    }, ms);
    return true;
  }

  clear(): void {
    if (this.tracking !== undefined) clearInterval(this.tracking);
    this.tracking = undefined;
    if (this.startTimer !== undefined) clearTimeout(this.startTimer);
    if (this.exitTimer !== undefined) clearTimeout(this.exitTimer);
    this.startTimer = this.exitTimer = undefined;
  }
}
