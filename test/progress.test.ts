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
});
