// The queue's entry: bundled on its own (dist/queue.mjs) so that BullMQ and ioredis are
// parsed only by the commands that take --queue, never at every start of the CLI.
export { crewRunQueued, type QueuedCrewOptions } from './crew-queue.ts';
export { crewWorker, type CrewWorkerOptions } from './crew-worker.ts';
