import { describe, expect, test } from 'vitest';
import { ProgressBar } from '../main/batch/progress.ts';
import type { Io } from '../main/cli/io.ts';

function recorder(tty: boolean): Io & { raw: string[]; lines: string[] } {
  const raw: string[] = [];
  const lines: string[] = [];
  return { raw, lines, out: (line) => lines.push(line), err: (line) => lines.push(line), errRaw: (text) => raw.push(String(text)), stderrIsTTY: tty };
}

describe('ProgressBar', () => {
  test('should draw runs, rate, ETA and invalid count on a terminal, and clear itself', () => {
    const io = recorder(true);
    const bar = new ProgressBar(io, 2);
    bar.tick(false);
    bar.tick(true);
    expect(io.raw.at(-1)).toMatch(/^\r\x1b\[2K\[#{24}\] 2\/2 runs {2}\d+ runs\/s {2}ETA 0s {2}invalid 1$/);
    bar.print(() => io.out('ARTIFACT_INVALID: run=r'));
    expect(io.lines).toEqual(['ARTIFACT_INVALID: run=r']);
    bar.finish();
    expect(io.raw.at(-1)).toBe('\r\x1b[2K');
  });

  test('should stay silent when stderr is not a terminal', () => {
    const io = recorder(false);
    const bar = new ProgressBar(io, 3);
    bar.tick(false);
    bar.print(() => io.out('line'));
    bar.finish();
    expect(io.raw).toEqual([]);
    expect(io.lines).toEqual(['line']);
  });

  test('should redraw at most about ten times a second however many runs finish or lines print (15)', () => {
    const io = recorder(true);
    let now = 0;
    const runs = 20_000;
    const bar = new ProgressBar(io, runs, () => now);
    // Two seconds of runs, every one invalid and printing a line, as a batch reports them.
    for (let i = 0; i < runs; i++) {
      now += 2000 / runs;
      bar.print(() => io.out(`ARTIFACT_INVALID: run=r${i}`));
      bar.tick(true);
    }
    bar.finish();
    const draws = io.raw.filter((text) => text.startsWith('\r\x1b[2K[')).length;
    expect(draws).toBeGreaterThanOrEqual(2);
    expect(draws).toBeLessThanOrEqual(22);
    expect(io.lines).toHaveLength(runs);
    expect(io.raw.join('').length).toBeLessThan(10_000);
  });
});
