import type Redis from 'ioredis';
import type { RedisOptions } from 'ioredis';

/** The channel a crew run's coordinator publishes on each time it said more copied, or answered asks. */
export function copiedChannel(runAs: string): string {
  return `laneward:copied:${runAs}`;
}

/**
 * A worker's ear for its coordinators' word that they copied more or answered (one
 * subscriber connection for the whole worker, opened at the first wait): a wait for the
 * coordinator asks again when word comes, not on a timer. The word carries nothing to
 * trust: the asker reads the fact itself, and word lost (a reconnect) only costs the wait
 * its fallback pause.
 */
export class CopiedSignal {
  private client: Redis | undefined;
  private starting = false;
  private readonly subscribed = new Set<string>();
  private readonly waiters = new Map<string, Set<() => void>>();
  private closed = false;

  constructor(private readonly connection: RedisOptions) {}

  /**
   * The next word on the crew run's channel after this call, or `ms` later (`heard`), and
   * `stop` for a caller that no longer waits. Taken before the ask it follows, so word that
   * comes while the ask is answered counts.
   */
  next(runAs: string, ms: number): { readonly heard: Promise<void>; stop(): void } {
    const channel = copiedChannel(runAs);
    this.listen(channel);
    const waiters = this.waiters.get(channel) ?? new Set<() => void>();
    this.waiters.set(channel, waiters);
    let done = () => undefined as void;
    const heard = new Promise<void>((resolve) => {
      const timer = setTimeout(() => done(), ms);
      done = () => {
        clearTimeout(timer);
        waiters.delete(done);
        resolve();
      };
      waiters.add(done);
    });
    return { heard, stop: () => done() };
  }

  close(): void {
    this.closed = true;
    this.client?.disconnect();
    for (const waiters of this.waiters.values()) for (const done of [...waiters]) done();
  }

  private listen(channel: string): void {
    if (this.closed || this.subscribed.has(channel)) return;
    this.subscribed.add(channel);
    // While the connection is being made, a channel added joins the first subscribe.
    if (this.client === undefined) {
      if (this.starting) return;
      this.starting = true;
      void (async () => {
        const { default: RedisClient } = await import('ioredis');
        if (this.closed) return;
        // Its own connection: a subscribed one takes no other command. It subscribes again after a reconnect.
        const client = new RedisClient({ ...this.connection, maxRetriesPerRequest: null });
        client.on('error', () => undefined);
        client.on('message', (heard: string) => {
          for (const done of [...(this.waiters.get(heard) ?? [])]) done();
        });
        this.client = client;
        await client.subscribe(...this.subscribed).catch(() => undefined);
      })();
      return;
    }
    void this.client.subscribe(channel).catch(() => undefined);
  }
}
