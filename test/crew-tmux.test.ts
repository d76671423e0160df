import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { writeDemoCrew } from '../main/demo/demo-crew.ts';
import { BUNDLE, ensureBuilt, ROOT } from './helpers/cli.ts';
import { killStrays, pidsNaming, until } from './helpers/procs.ts';
import { tempRoot } from './helpers/tmp.ts';

// tmux's default scroll-on-clear pushes the whole screen into its history when a clear to
// the end of the screen comes from the pane's top row: a live region redrawn so would pile
// copies of itself up in the scrollback. .ci/run installs tmux.
const SKIP = spawnSync('tmux', ['-V'], { encoding: 'utf8' }).status === 0 ? undefined : 'tmux is not installed';

const root = tempRoot('crew-tmux');
const socket = join(root, 'tmux.sock');
const tmux = (...args: string[]) => spawnSync('tmux', ['-S', socket, '-f', '/dev/null', ...args], { encoding: 'utf8' });

beforeAll(() => ensureBuilt());
afterAll(async () => {
  // The server hangs up its pane (the shell and its sleep): each is gone once it took the signal.
  tmux('kill-server');
  await until(() => pidsNaming(root).length === 0, 10_000, 'the tmux server and its pane to end').catch(() => undefined);
  expect(killStrays(root)).toEqual([]);
});

describe.skipIf(SKIP !== undefined)('a crew under tmux', () => {
  test('should leave one copy of its live region in the pane and its history, however often it redrew', async () => {
    const dir = join(root, 'crew');
    const file = writeDemoCrew({ dir, crew: 'tm', lanes: 6, broken: 0, concurrency: 2, fixtures: join(ROOT, 'fixtures') });
    const run = `${process.execPath} ${BUNDLE} crew run ${file} --state ${join(dir, 'state')}; echo CREW_EXIT=$?`;
    expect(tmux('new-session', '-d', '-x', '80', '-y', '24', '-c', dir, 'sh', '-c', `${run}; sleep 120`).status).toBe(0);
    const pane = () => tmux('capture-pane', '-p', '-S', '-', '-E', '-').stdout;
    await until(() => pane().includes('CREW_EXIT='), 120_000, 'the crew to end in its pane');
    const text = pane();
    expect(text).toMatch(/^CREW_EXIT=0$/m);
    expect(text).toMatch(/^CREW_SUMMARY: lanes=6 complete=6 /m);
    // The region's first line names the crew; the final region stays on screen once.
    expect(text.split('\n').filter((line) => line.startsWith('crew tm |'))).toHaveLength(1);
  }, 180_000);
});
