import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomicAsync } from '../main/fs/atomic-write.ts';

// The runs suite's baseline for a command's files: a run directory's files written alone,
// as the commands write them. Creating a file is this disk's cost, whatever code is around it.

/** The files one run's commands made in its run directory (the result files the drive wrote aside). */
export function filesPerRun(dir: string, tag: string, count: number): number {
  let files = 0;
  for (let i = 0; i < count; i++) files += readdirSync(join(dir, `${tag}-${i}`)).length;
  // Each run's four results are the drive's, written outside the timed commands.
  return files / count - 4;
}

/**
 * The run-directory files of the drive's waves alone: for each wave, its commands' files
 * (`perCommand` a command, 2 KiB each) written at once, atomically and not synced, as the
 * commands write theirs, each run's into a directory of its own.
 */
export async function bareFileWrites(dir: string, waves: readonly number[], perCommand: number): Promise<{ files: number; commands: number; ms: number }> {
  const body = Buffer.alloc(2048, 'x');
  let files = 0;
  let commands = 0;
  let ms = 0;
  let carry = 0;
  for (const [w, size] of waves.entries()) {
    const dirs = Array.from({ length: size }, (_, i) => join(dir, `w${w}-${i}`));
    for (const d of dirs) mkdirSync(d, { recursive: true });
    carry += size * perCommand;
    const count = Math.floor(carry);
    carry -= count;
    const start = performance.now();
    await Promise.all(Array.from({ length: count }, (_, i) => writeFileAtomicAsync(join(dirs[i % size]!, `file-${i}.md`), body, 0o644, false)));
    ms += performance.now() - start;
    files += count;
    commands += size;
  }
  return { files, commands, ms };
}
