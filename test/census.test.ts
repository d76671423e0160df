import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { TreeCensus } from '../workers/supervise/census.ts';
import { spawnGroup } from '../workers/supervise/process-group.ts';
import { ProcSnapshots, type ProcSnapshot } from '../workers/supervise/proc-snapshot.ts';
import { canRun, killQuietly, pidsIn, sleep, until } from './helpers/procs.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('census');

/** A snapshot source whose snapshot of this turn is always `stale`: a listing taken before a fork. */
function staleSource(stale: ProcSnapshot, fresh: ProcSnapshots): ProcSnapshots {
  return { current: () => stale, next: () => Promise.resolve(fresh.current()), warm: () => {} } as unknown as ProcSnapshots;
}

describe('TreeCensus.gone', () => {
  test('should not call a tree gone when a child forked after the listing began outlives its parent', async () => {
    const pidfile = join(root, 'forked.pid');
    const leader = spawnGroup({ argv: ['bash', '-c', `read -r _; sleep 31 & echo $! > '${pidfile}'; exit 0`], stdio: ['pipe', 'ignore', 'ignore'] });
    await once(leader, 'spawn');
    const stale = new ProcSnapshots().current();
    const census = new TreeCensus(leader.pid!, staleSource(stale, new ProcSnapshots()));
    const exited = once(leader, 'exit');
    try {
      leader.stdin!.end('go\n');
      await exited;
      await until(() => pidsIn(pidfile).length === 1, 5_000, 'the forked child');
      const [forked] = pidsIn(pidfile);
      expect(stale.byPid.has(forked!)).toBe(false);
      expect(canRun(forked!)).toBe(true);
      // The only listing the census gets missed the child, and its parent is dead and reaped.
      expect(await census.gone()).toBe(false);
      killQuietly(forked!);
      let gone = false;
      for (let i = 0; i < 100 && !gone; i++) {
        gone = await census.gone();
        if (!gone) await sleep(20);
      }
      expect(gone).toBe(true);
    } finally {
      if (existsSync(pidfile)) for (const pid of pidsIn(pidfile)) killQuietly(pid);
    }
  });
});
