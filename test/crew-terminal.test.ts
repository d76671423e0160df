import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { writeDemoCrew } from '../main/demo/demo-crew.ts';
import { BUNDLE, ensureBuilt, ROOT } from './helpers/cli.ts';
import { emulator } from './helpers/emulator.ts';
import { pidsNaming } from './helpers/procs.ts';
import { tempRoot } from './helpers/tmp.ts';

// util-linux `script` gives the crew a real pseudo-terminal; what it relays is fed to a
// headless xterm of the same size, whose scrollback then holds what a user scrolls back to.
const SKIP = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0 ? undefined : 'util-linux script is not installed';

const root = tempRoot('crew-terminal');
const started: ChildProcess[] = [];


function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Gone meanwhile.
  }
}

afterAll(() => {
  // `script` leads its own group (detached); the crew under it is in the pty's session.
  for (const child of started) if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) kill(-child.pid);
  for (const pid of pidsNaming(root)) kill(pid);
});

/** A word for the `script -c` command line: every path in it is ours, quoted all the same. */
const quote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;

/** Runs `argv` on a pseudo-terminal of `columns` x `rows`; resolves with everything it wrote there, and its exit code. */
function onTerminal(argv: readonly string[], columns: number, rows: number, cwd: string): Promise<{ bytes: Buffer; code: number | null }> {
  const command = `stty cols ${columns} rows ${rows} && exec ${argv.map(quote).join(' ')}`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  started.push(child);
  const chunks: Buffer[] = [];
  child.stdout!.on('data', (chunk: Buffer) => chunks.push(chunk));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ bytes: Buffer.concat(chunks), code }));
  });
}

/** The buffer's rows joined into the lines written: a wrapped row continues the line above. */
function logicalLines(rows: readonly { text: string; wrapped: boolean }[]): { text: string; rows: number }[] {
  const lines: { text: string; rows: number }[] = [];
  for (const row of rows) {
    const last = lines.at(-1);
    if (row.wrapped && last !== undefined) lines[lines.length - 1] = { text: last.text + row.text, rows: last.rows + 1 };
    else lines.push({ text: row.text, rows: 1 });
  }
  return lines;
}

beforeAll(() => ensureBuilt());

describe.skipIf(SKIP !== undefined)(`crew run on a terminal${SKIP === undefined ? '' : ` (skipped: ${SKIP})`}`, () => {
  // The two sizes run at once: each crew spends most of its seconds waiting on a stalled reviewer's lease.
  test.concurrent.for([80, 150])('should leave every lane line once, the summary once and one region under them, at %i columns', async (columns, { expect }) => {
    const rows = 40;
    const name = `tty-${columns}`;
    const dir = join(root, name);
    // Two lanes at a time: the crew runs some seconds, long enough to draw its region many times.
    const file = writeDemoCrew({ dir, crew: name, lanes: 12, broken: 3, concurrency: 2, instant: true, fixtures: join(ROOT, 'fixtures') });
    const run = await onTerminal([process.execPath, BUNDLE, 'crew', 'run', file, '--state', join(dir, 'state')], columns, rows, dir);
    expect(run.code).toBe(1);
    const screen = emulator(columns, rows, 100_000);
    await screen.write(run.bytes);
    const buffer = screen.rows();
    screen.dispose();
    const lines = logicalLines(buffer);

    // The region was drawn many times over the run, and erased each time but the last.
    const header = new RegExp(`^crew ${name} \\| `);
    expect(run.bytes.toString('utf8').split(`crew ${name} | `).length - 1).toBeGreaterThan(5);
    expect(buffer.filter((row) => header.test(row.text))).toHaveLength(1);

    const laneLines = lines.filter((line) => line.text.startsWith('CREW_LANE: '));
    const lanes = laneLines.map((line) => / lane=(\S+) /.exec(line.text)?.[1]).sort();
    expect(lanes).toEqual(Array.from({ length: 12 }, (_, i) => `lane-${String(i + 1).padStart(2, '0')}`));
    expect(laneLines.filter((line) => / status=failed code=[A-Z_]+ /.test(line.text))).toHaveLength(3);
    const summary = lines.filter((line) => line.text.startsWith('CREW_SUMMARY: '));
    expect(summary.map((line) => line.text)).toEqual([expect.stringMatching(/^CREW_SUMMARY: lanes=12 complete=9 failed=3 interrupted=0 attempts=\d+ duration_s=\d+\.\d$/)]);

    // Lane lines first (they may be wider than the terminal: stdout is written as is), then
    // the final region, whose rows never wrap, then the summary; nothing else anywhere.
    expect(lines.slice(0, 12)).toEqual(laneLines);
    expect(lines.at(-1)).toEqual(summary[0]);
    const region = lines.slice(12, -1);
    for (const line of region) {
      expect(line.rows).toBe(1);
      expect([...line.text].length).toBeLessThanOrEqual(columns - 1);
    }
    expect(region.map((line) => line.text)).toEqual([
      expect.stringMatching(header),
      'lanes: complete 9, failed 3',
      expect.stringMatching(/^attempts: 0 running, 0 queued \| \d+\.\d\d lanes\/min \| ETA 0s$/),
      // The demo's runners are argv programs: every call of theirs is of unknown cost, and said so.
      `spend: $0.00 | no cap | ${laneLines.reduce((sum, line) => sum + Number(/ unpriced=(\d+) /.exec(line.text)![1]), 0)} unpriced call(s)`,
      expect.stringMatching(/^marks: \d+\/s \| renewal p99 (\d+\.\d\d ms|-)$/),
      expect.stringMatching(/^failed lane-04 [A-Z_]+: /),
      expect.stringMatching(/^failed lane-08 [A-Z_]+: /),
      expect.stringMatching(/^failed lane-12 [A-Z_]+: /),
      // The failed lanes' one command, cut to the width like every row.
      expect.stringMatching(/^retry: laneward crew run /),
    ]);
    expect(region[0]!.text).toMatch(/ \| done$/);
  });
});
