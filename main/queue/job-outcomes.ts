import type { QueueEvents } from 'bullmq';

/** How a job ended: its return value, or the reason it failed with. */
export type JobOutcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly reason: string };

/**
 * The outcomes of the jobs a coordinator waits for, from one pair of listeners on the
 * queue's events (BullMQ's `waitUntilFinished` adds listeners per job and makes Redis
 * calls in a promise executor, whose rejection on a lost Redis reaches no one). An
 * outcome promise never rejects, so one that settles before it is awaited is no
 * unhandled rejection; the first report of a job wins.
 */
export interface JobOutcomes {
  /** Starts waiting for `id`: call it before the job can finish. */
  expect(id: string): Promise<JobOutcome>;
  /** Settles `id` from what Redis holds, for a job that finished before its events were read. */
  settle(id: string, outcome: JobOutcome): void;
}

export function jobOutcomes(events: QueueEvents): JobOutcomes {
  const waiting = new Map<string, (outcome: JobOutcome) => void>();
  const settle = (id: string, outcome: JobOutcome) => {
    const resolve = waiting.get(id);
    waiting.delete(id);
    resolve?.(outcome);
  };
  events.on('completed', ({ jobId, returnvalue }) => settle(jobId, { ok: true, value: returnvalue }));
  events.on('failed', ({ jobId, failedReason }) => settle(jobId, { ok: false, reason: failedReason }));
  return {
    expect: (id) => new Promise((resolve) => waiting.set(id, resolve)),
    settle,
  };
}
