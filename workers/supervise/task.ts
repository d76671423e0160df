import type { MessagePort } from 'node:worker_threads';
import { workerData } from 'node:worker_threads';
import { BUILD_ID } from '../../formats/build-id.ts';
import { superviseLease } from './lease.ts';
import type { LeaseOutcome, LeaseSpec } from './lease-types.ts';

const expected = (workerData as { buildId?: unknown } | undefined)?.buildId;
if (expected !== BUILD_ID) {
  throw new Error(`supervise worker is build ${BUILD_ID}, coordinator expects ${String(expected)}`);
}

/** A cancel request from the coordinator, by message: never a thread termination. */
export interface CancelMessage {
  readonly type: 'cancel';
  readonly signal: NodeJS.Signals;
}

/**
 * Piscina task: supervise one provider. Many run at once in one worker (they wait on
 * I/O and timers). Cancellation arrives on `port`, and this worker tears its own
 * children down: terminating the thread instead would orphan them.
 */
export default async function supervise({ spec, port }: { spec: LeaseSpec; port: MessagePort }): Promise<LeaseOutcome> {
  const cancel = new AbortController();
  port.on('message', (message: CancelMessage) => {
    if (message?.type === 'cancel') cancel.abort(message.signal);
  });
  try {
    return await superviseLease(spec, {}, cancel.signal);
  } finally {
    port.close();
  }
}
