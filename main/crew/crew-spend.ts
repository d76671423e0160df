import { onAbort } from '../../workers/supervise/on-abort.ts';

/** The crew's spend as its ledger holds it: figures only, for lines and views. */
export interface CrewSpendFacts {
  readonly cap: number | null;
  /** What the calls that ended cost, from their streams (claude's figure, others' tokens at `prices`). */
  readonly spentUsd: number;
  /** Held by calls in flight, each at the reservation, until its real cost replaces it. */
  readonly heldUsd: number;
  /** Calls that ended with no known cost (no price for their model, or not a preset): each counts at the reservation. */
  readonly unpriced: number;
  readonly reserveUsd: number;
}

/** A call admitted under the cap: settled once with its real cost (null: unknown). */
export interface SpendHold {
  settle(usd: number | null): void;
}

/**
 * One crew's spend cap over every call it starts: reviewers, observers and agents of all
 * its lanes. A call is admitted when what was spent, what calls in flight hold and what
 * unpriced calls count, plus its own reservation, stay within the cap; else it waits for a
 * call in flight to settle (its hold is replaced by its real cost, usually far less), and
 * is refused only when no call is in flight to free room. A call whose cost stays unknown
 * keeps counting at its reservation: the cap is a promise, and what cannot be measured is
 * assumed at the figure the operator set for it.
 */
export class CrewSpend {
  private spent: number;
  private held = 0;
  private unpriced: number;
  private readonly waiters = new Set<() => void>();

  constructor(
    readonly cap: number | null,
    readonly reserveUsd: number,
    before: { readonly spentUsd: number; readonly unpriced: number } = { spentUsd: 0, unpriced: 0 },
  ) {
    this.spent = before.spentUsd;
    this.unpriced = before.unpriced;
  }

  facts(): CrewSpendFacts {
    return { cap: this.cap, spentUsd: round(this.spent), heldUsd: round(this.held), unpriced: this.unpriced, reserveUsd: this.reserveUsd };
  }

  /** Worst case of what the crew spent: spent, held, and unpriced calls at their reservation. */
  worstCase(): number {
    return this.spent + this.held + this.unpriced * this.reserveUsd;
  }

  /**
   * Admits one call: its hold, 'refused' when even with nothing in flight it would pass the
   * cap, 'cancelled' when `cancel` fired while it waited for room. `running`: the call runs
   * already (an orphan a crew that died left, adopted): it holds its reservation at once,
   * never waits nor is refused, since refusing it would not stop what it spends.
   */
  async admit(cancel: AbortSignal, options: { readonly running?: boolean } = {}): Promise<SpendHold | 'refused' | 'cancelled'> {
    const each = this.cap === null ? 0 : this.reserveUsd;
    for (;;) {
      if (options.running === true) break;
      if (cancel.aborted) return 'cancelled';
      if (this.cap === null || this.worstCase() + each <= this.cap + 1e-9) break;
      if (this.held <= 0) return 'refused';
      await this.nextSettle(cancel);
    }
    this.held += each;
    let settled = false;
    return {
      settle: (usd) => {
        if (settled) return;
        settled = true;
        this.held = Math.max(0, this.held - each);
        if (usd === null) this.unpriced += 1;
        else this.spent += usd;
        for (const wake of [...this.waiters]) wake();
      },
    };
  }

  private nextSettle(cancel: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      let unlink = (): void => undefined;
      const done = () => {
        this.waiters.delete(done);
        unlink();
        resolve();
      };
      this.waiters.add(done);
      unlink = onAbort(cancel, done);
    });
  }
}

function round(usd: number): number {
  return Math.round(usd * 1e8) / 1e8;
}
