import { Bench } from 'tinybench';

export interface Measured {
  readonly name: string;
  /** Milliseconds per call. */
  readonly p50: number;
  readonly p99: number;
  readonly mean: number;
  readonly samples: number;
}

/**
 * Runs tasks through one tinybench Bench, interleaving nothing: each task gets its own
 * warm-up and iterations. Heavy tasks pass a small iteration count and no minimum time.
 */
export async function measure(
  tasks: Record<string, () => unknown>,
  options: { iterations: number; time?: number; warmupIterations?: number },
): Promise<Record<string, Measured>> {
  const bench = new Bench({
    iterations: options.iterations,
    time: options.time ?? 0,
    warmupIterations: options.warmupIterations ?? 1,
    warmupTime: 0,
    throws: true,
  });
  for (const [name, fn] of Object.entries(tasks)) bench.add(name, fn as () => Promise<void>);
  await bench.run();
  const out: Record<string, Measured> = {};
  for (const task of bench.tasks) {
    const result = task.result;
    if (result.state !== 'completed') throw new Error(`bench task ${task.name} ended ${result.state}`);
    out[task.name] = {
      name: task.name,
      p50: result.latency.p50,
      p99: result.latency.p99,
      mean: result.latency.mean,
      samples: result.latency.samples?.length ?? options.iterations,
    };
  }
  return out;
}

export function ratio(value: number, baseline: number): string {
  return `${(value / baseline).toFixed(2)}x`;
}

/** Prints one figure: what was measured, the value, the baseline and the ratio with its target. */
export function line(label: string, detail: string): void {
  process.stdout.write(`${label.padEnd(44)} ${detail}\n`);
}
