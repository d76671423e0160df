import { BUILD_ID } from '../../formats/build-id.ts';
import { workerFile } from '../pool.ts';

/** What the queue bundle offers. */
export type QueueModule = typeof import('./index.ts');

// Not a literal: the main bundle must not inline the queue (its own bundle, dist/queue.mjs).
const SOURCE = './index.ts';

/** The queue's code: its bundle beside the main one, or its sources when run unbundled (tests). */
export async function loadQueue(): Promise<QueueModule> {
  return (await import(BUILD_ID === 'dev' ? SOURCE : workerFile('queue'))) as QueueModule;
}
