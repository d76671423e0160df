import { MessageChannel } from 'node:worker_threads';
import { toError } from '../../formats/error.ts';
import type { CancelMessage } from '../../workers/supervise/task.ts';
import type { LeaseOutcome, LeaseSpec } from '../../workers/supervise/lease-types.ts';
import { nowMs } from '../../workers/supervise/monotonic-timer.ts';
import { createPool } from '../pool.ts';

/** Supervisions one worker thread carries at once: they wait on pipes and timers, not CPU. */
const PER_WORKER = 512;

/**
 * Supervises many providers at once across the pool, each a Piscina task with its own
 * cancel port. `cancel` reaches every running task as a message; each worker then tears
 * its own children down.
 */
export async function superviseMany(
  specs: readonly LeaseSpec[],
  options: { threads: number; cancel?: AbortSignal; onOutcome?: (index: number, outcome: LeaseOutcome) => void },
): Promise<LeaseOutcome[]> {
  let poolError: Error | undefined;
  const pool = await createPool('supervise', options.threads, (error) => (poolError ??= error), { concurrentTasksPerWorker: PER_WORKER });
  const ports = specs.map(() => new MessageChannel());
  const onCancel = () => {
    const signal = (typeof options.cancel?.reason === 'string' ? options.cancel.reason : 'SIGTERM') as NodeJS.Signals;
    for (const { port1 } of ports) port1.postMessage({ type: 'cancel', signal } satisfies CancelMessage);
  };
  options.cancel?.addEventListener('abort', onCancel, { once: true });
  try {
    return await Promise.all(
      specs.map(async (spec, index) => {
        const { port1, port2 } = ports[index]!;
        try {
          // Each supervision's budget starts when it is dispatched, not when the fleet began.
          const dispatched = { ...spec, startedAt: nowMs() };
          const outcome = (await pool.run({ spec: dispatched, port: port2 }, { transferList: [port2] })) as LeaseOutcome;
          options.onOutcome?.(index, outcome);
          return outcome;
        } catch (error) {
          throw toError(poolError ?? error);
        } finally {
          port1.close();
        }
      }),
    );
  } finally {
    options.cancel?.removeEventListener('abort', onCancel);
    await pool.destroy();
  }
}
