import { availableParallelism } from 'node:os';
import type { Piscina } from 'piscina';
import { BUILD_ID } from '../formats/build-id.ts';

/** Worker bundles sit beside the main bundle in dist/. */
export function workerFile(name: string): string {
  return new URL(`./${name}.mjs`, import.meta.url).href;
}

export function defaultThreads(): number {
  return Math.max(1, availableParallelism());
}

/**
 * A pool of one worker bundle, stamped with this build's id: a worker of another build
 * throws at load and the pool rejects its tasks instead of answering. Piscina stays in
 * node_modules (it starts its own worker script from beside its own code) and is loaded
 * only here, so commands without a pool never pay for it. An error outside any task is
 * handed to `onError` rather than crashing the coordinator.
 */
export async function createPool(
  name: string,
  threads: number,
  onError: (error: Error) => void,
  options: { concurrentTasksPerWorker?: number } = {},
): Promise<Piscina> {
  const { Piscina } = await import('piscina');
  const pool = new Piscina({
    filename: workerFile(name),
    minThreads: threads,
    maxThreads: threads,
    idleTimeout: 1_000,
    workerData: { buildId: BUILD_ID },
    // Hint: validation parses rows by the million and drops them at once; a larger young
    // generation means fewer scavenges (the default semi-space is sized for servers).
    resourceLimits: { maxYoungGenerationSizeMb: 48 },
    ...options,
  });
  pool.on('error', onError);
  return pool;
}
