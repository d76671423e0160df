import { onAbort } from '../../workers/supervise/on-abort.ts';

/**
 * At most `limit` holders at once; the rest wait in arrival order (FIFO). A wait can be
 * abandoned (its signal aborts, or everything is dropped at close): it then resolves
 * false and never holds a slot.
 */
export class Slots {
  private held = 0;
  private readonly waiting: { grant: (granted: boolean) => void; unlink: () => void }[] = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`a slot limit is a whole number of at least 1, got ${limit}`);
  }

  get active(): number {
    return this.held;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /** Resolves true once a slot is held (the caller must `release` it), false if abandoned. */
  acquire(signal?: AbortSignal): Promise<boolean> {
    if (signal?.aborted) return Promise.resolve(false);
    if (this.held < this.limit && this.waiting.length === 0) {
      this.held += 1;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const waiter = { grant: resolve, unlink: () => undefined as void };
      this.waiting.push(waiter);
      if (signal !== undefined) {
        waiter.unlink = onAbort(signal, () => {
          const at = this.waiting.indexOf(waiter);
          if (at >= 0) this.waiting.splice(at, 1);
          resolve(false);
        });
      }
    });
  }

  /** Frees one slot and hands it straight to the longest waiter. */
  release(): void {
    const next = this.waiting.shift();
    if (next === undefined) {
      this.held -= 1;
      return;
    }
    next.unlink();
    next.grant(true);
  }

  /** Abandons every wait (at close). */
  drop(): void {
    for (const waiter of this.waiting.splice(0)) {
      waiter.unlink();
      waiter.grant(false);
    }
  }
}
