import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { signedActions, type SignedActions } from './helpers/actions.ts';
import { BUNDLE, ensureBuilt } from './helpers/cli.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('channel');
let descriptor: SignedActions;

beforeAll(() => {
  ensureBuilt();
  descriptor = signedActions(root, { review: { timeout_mode: 'admitted_progress_inactivity', progress: 'fd', cleanup_reserve_ms: 0, post_provider_ms: 1000 } });
});

describe('laneward lease run, progress channel', () => {
  test('should fail closed with zero attempts when the progress pipe cannot be made', () => {
    // Under a tight descriptor limit laneward itself still starts, but the three pipes of
    // a leased launch cannot all be made: that is the channel being unavailable.
    const refusals: number[] = [];
    for (let limit = 14; limit <= 48; limit += 2) {
      const marker = join(root, `ran-${limit}`);
      const child = spawnSync(
        'bash',
        ['-c', `ulimit -n ${limit}; exec "$0" "$@"`, process.execPath, BUNDLE, 'lease', 'run', '--json', '--actions', descriptor.file, '--trust', descriptor.trust, '--action', 'review', '--timeout-ms', '5000', '--', 'touch', marker],
        { encoding: 'utf8' },
      );
      if (child.status !== 3) continue;
      // Tighter still, even the descriptor cannot be read: refused all the same.
      const outcome = JSON.parse(child.stdout);
      expect(outcome).toMatchObject({ status: 'refused', attempts: 0, providerStarted: false });
      expect(existsSync(marker)).toBe(false);
      if (outcome.code === 'PROGRESS_CHANNEL_UNAVAILABLE') refusals.push(limit);
    }
    expect(refusals.length).toBeGreaterThan(0);
  });
});
