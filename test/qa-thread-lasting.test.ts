import { describe, expect, test } from 'vitest';
import { lastingQaThread, type QaService, type QaThread } from '../main/crew/qa-client.ts';
import type { ObserverSettings } from '../main/crew/qa-service.ts';
import { QA_DEFAULTS } from '../main/qa/index.ts';

// A queue worker keeps one QA thread for every lane job it runs: one that died is replaced
// at the next crew's start, once, however many crews start at that moment.

/** A QA thread that records its tenants and closes, and dies when told. */
function fakeThread(name: string, log: string[]): QaThread & { die(): void } {
  let dead = false;
  return {
    root: '/state',
    failed: () => dead,
    die: () => void (dead = true),
    tenant: async () => {
      log.push(`tenant ${name}`);
      return { close: async () => undefined } as unknown as QaService;
    },
    close: async () => void log.push(`close ${name}`),
  };
}

const observer: ObserverSettings = { actionsFile: '/a', trust: '/t', action: 'observe', timeoutMs: 1_000 };
const supervise = (() => Promise.reject(new Error('unused'))) as never;

describe('lastingQaThread', () => {
  test('should open tenants on the first thread while it lives, and replace a dead one once for the crews that start after it died', async () => {
    const log: string[] = [];
    const first = fakeThread('first', log);
    const started: string[] = [];
    const second = fakeThread('second', log);
    const lasting = lastingQaThread(first, async (root) => {
      started.push(root);
      return second;
    });
    await lasting.tenant(supervise, QA_DEFAULTS, observer);
    expect(log).toEqual(['tenant first']);
    first.die();
    expect(lasting.failed()).toBe(true);
    // Two crews start at once after the death: one replacement serves both.
    await Promise.all([lasting.tenant(supervise, QA_DEFAULTS, observer), lasting.tenant(supervise, QA_DEFAULTS, observer)]);
    expect(started).toEqual(['/state']);
    expect(log).toEqual(['tenant first', 'close first', 'tenant second', 'tenant second']);
    expect(lasting.failed()).toBe(false);
    await lasting.close();
    expect(log.at(-1)).toBe('close second');
  });
});
