import { constants } from 'node:os';
import { toError } from '../../formats/error.ts';
import type { CancelMessage, SuperviseTask } from '../../workers/supervise/task.ts';
import type { Outcome } from '../../workers/supervise/outcome.ts';
import type { SupervisionSpec } from '../../workers/supervise/spec.ts';
import { createPool } from '../pool.ts';

/** Supervisions one worker thread carries at once: they wait on pipes and timers, not CPU. */
const PER_WORKER = 512;

/**
 * Supervises many providers at once across the pool, each a Piscina task with its own
 * cancel port. `cancel` reaches every running task as a message, and each worker tears
 * its own children down; a task not yet started sees the shared flag and starts nothing.
 */
export async function superviseMany(
  specs: readonly SupervisionSpec[],
  options: { threads: number; cancel?: AbortSignal; onOutcome?: (index: number, outcome: Outcome) => void },
): Promise<Outcome[]> {
  // Loaded here, not at start-up: worker_threads costs milliseconds every command would pay.
  const { MessageChannel } = await import('node:worker_threads');
  // Shared with every worker: a task dispatched after the cancel starts nothing.
  const cancelled = new Int32Array(new SharedArrayBuffer(4));
  const ports = specs.map(() => new MessageChannel());
  const onCancel = () => {
    const signal = (typeof options.cancel?.reason === 'string' ? options.cancel.reason : 'SIGTERM') as NodeJS.Signals;
    Atomics.store(cancelled, 0, constants.signals[signal] ?? constants.signals.SIGTERM);
    for (const { port1 } of ports) port1.postMessage({ type: 'cancel', signal } satisfies CancelMessage);
  };
  // Listening before the pool starts: a signal during its start-up cancels too.
  if (options.cancel?.aborted) onCancel();
  else options.cancel?.addEventListener('abort', onCancel, { once: true });
  let poolError: Error | undefined;
  const pool = await createPool('supervise', options.threads, (error) => (poolError ??= error), { concurrentTasksPerWorker: PER_WORKER });
  try {
    return await Promise.all(
      specs.map(async (spec, index) => {
        const { port1, port2 } = ports[index]!;
        try {
          // The budget runs from the caller's start: queueing is pre-launch work and counts.
          const task: SuperviseTask = { spec, port: port2, cancelled };
          const outcome = (await pool.run(task, { transferList: [port2] })) as Outcome;
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
