import { describe, expect, test } from 'vitest';
import { LiveRegion, type RegionTerminal } from '../main/console/live-region.ts';
import { emulator } from './helpers/emulator.ts';

/** A terminal that records what is written to it, with a size the test changes. */
function fakeTerminal(columns: number, rows?: number) {
  const log: string[] = [];
  const terminal: RegionTerminal & { columns: number; rows?: number } = { columns, ...(rows === undefined ? {} : { rows }), write: (data) => void log.push(data) };
  return { terminal, log };
}

/** Clears the row under the region, then each of its `n` rows going up (never ED: see live-region.ts). */
const UP_CLEAR = (n: number) => `\r\x1b[2K${'\x1b[1A\x1b[2K'.repeat(n)}`;

describe('LiveRegion', () => {
  test('should draw lines under the cursor, then go back up over them to redraw', () => {
    const { terminal, log } = fakeTerminal(80);
    const region = new LiveRegion(terminal);
    region.draw(['one', 'two']);
    region.draw(['three', 'four', 'five']);
    region.draw(['six']);
    expect(log).toEqual(['\r\x1b[2Kone\ntwo\n', `${UP_CLEAR(2)}three\nfour\nfive\n`, `${UP_CLEAR(3)}six\n`]);
  });

  test('should write nothing for the same lines at the same width, and redraw them at another', () => {
    const { terminal, log } = fakeTerminal(80);
    const region = new LiveRegion(terminal);
    region.draw(['a']);
    region.draw(['a']);
    expect(log).toHaveLength(1);
    terminal.columns = 100;
    region.draw(['a']);
    expect(log).toEqual(['\r\x1b[2Ka\n', `${UP_CLEAR(1)}a\n`]);
  });

  test('should cut a line to the width less one, and keep a row free of a short screen', () => {
    const { terminal, log } = fakeTerminal(10, 3);
    const region = new LiveRegion(terminal);
    region.draw(['0123456789abc', 'second', 'third']);
    expect(log).toEqual(['\r\x1b[2K01234567…\nsecond\n']);
  });

  test('should count the rows each drawn line takes at the width of now, after a resize', () => {
    const { terminal, log } = fakeTerminal(80);
    const region = new LiveRegion(terminal);
    region.draw(['x'.repeat(79), '', 'y'.repeat(30)]);
    // Narrower: the 79 columns take 3 rows of 30, the empty line still one, the 30 one.
    terminal.columns = 30;
    region.draw(['z']);
    expect(log[1]).toBe(`${UP_CLEAR(5)}z\n`);
  });

  test('should clear itself for a printed line and come back under it', () => {
    const { terminal, log } = fakeTerminal(80);
    const region = new LiveRegion(terminal);
    region.print(() => log.push('<before any draw>\n'));
    region.draw(['r1', 'r2']);
    region.print(() => log.push('CREW_LANE: lane=a\n'));
    expect(log).toEqual(['<before any draw>\n', '\r\x1b[2Kr1\nr2\n', UP_CLEAR(2), 'CREW_LANE: lane=a\n', '\r\x1b[2Kr1\nr2\n']);
  });

  test('should leave its last lines on close(true), clear them on close(false), and then only print', () => {
    const kept = fakeTerminal(80);
    const a = new LiveRegion(kept.terminal);
    a.draw(['final']);
    a.close(true);
    a.draw(['late']);
    a.print(() => kept.log.push('after\n'));
    expect(kept.log).toEqual(['\r\x1b[2Kfinal\n', 'after\n']);
    const cleared = fakeTerminal(80);
    const b = new LiveRegion(cleared.terminal);
    b.draw(['gone', 'too']);
    b.close(false);
    b.close(false);
    expect(cleared.log).toEqual(['\r\x1b[2Kgone\ntoo\n', UP_CLEAR(2)]);
  });
});

describe('LiveRegion on a terminal emulator', () => {
  test('should leave only the printed lines in the scrollback, and the last region under them', async () => {
    const screen = emulator(40, 10);
    const region = new LiveRegion({ columns: 40, rows: 10, write: (data) => screen.term.write(data) });
    for (let i = 1; i <= 30; i++) {
      region.draw([`crew demo | ${i}s`, `lanes: queued ${30 - i}, complete ${i}`, 'a line far wider than the forty columns of this terminal']);
      region.print(() => screen.term.write(`CREW_LANE: lane=lane-${i}\n`));
    }
    region.draw(['crew demo | 31s | done', 'lanes: complete 30']);
    region.close(true);
    await screen.write('CREW_SUMMARY: lanes=30\n');
    expect(screen.rows()).toEqual([
      ...Array.from({ length: 30 }, (_, i) => ({ text: `CREW_LANE: lane=lane-${i + 1}`, wrapped: false })),
      { text: 'crew demo | 31s | done', wrapped: false },
      { text: 'lanes: complete 30', wrapped: false },
      { text: 'CREW_SUMMARY: lanes=30', wrapped: false },
    ]);
    screen.dispose();
  });

  test('should find its top again after the terminal was made narrower and rewrapped it', async () => {
    const screen = emulator(80, 12);
    let columns = 80;
    const region = new LiveRegion({ get columns() { return columns; }, rows: 12, write: (data) => screen.term.write(data) });
    await screen.write('above\n');
    region.draw(['w'.repeat(79), 'short', 'v'.repeat(60)]);
    await screen.write('');
    columns = 30;
    screen.term.resize(30, 12);
    region.draw(['narrow 1', 'narrow 2']);
    await screen.write('');
    expect(screen.rows()).toEqual([
      { text: 'above', wrapped: false },
      { text: 'narrow 1', wrapped: false },
      { text: 'narrow 2', wrapped: false },
    ]);
    screen.dispose();
  });
});
