import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { writeDemoCrew } from '../main/demo/demo-crew.ts';
import { openStore, readCrewRun } from '../main/store/store.ts';
import { bringBase, reopenable } from '../main/land/reopen.ts';
import { LanewardError } from '../formats/codes/error.ts';
import { turnBlobs } from '../main/crew/turn-size.ts';
import { BUNDLE, codesOf, ensureBuilt, laneward } from './helpers/cli.ts';
import { exitOf, killStrays, until } from './helpers/procs.ts';
import { baseRepo, git } from './helpers/git.ts';
import { tempRoot } from './helpers/tmp.ts';

// A lane the merge train turned away (a conflict, a changed product diff) goes back to its
// agent on the next crew run: the base merged into its worktree by laneward, one new turn
// in its own session, its pregate and a new receipt; the next train lands it.

const root = tempRoot('crew-reopen');
const fixtures = join(import.meta.dirname, '..', 'fixtures');

beforeAll(() => ensureBuilt());
afterEach(() => {
  expect(killStrays(root)).toEqual([]);
});

const twenty = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

/** lane-1 and lane-2 edit the same line (lane-2 conflicts); lane-3 and lane-4 three lines apart (lane-4's hunk context changes). */
const EDITS: Record<string, [string, number]> = {
  'lane-1': ['p1.txt', 5],
  'lane-2': ['p1.txt', 5],
  'lane-3': ['p2.txt', 5],
  'lane-4': ['p2.txt', 8],
};

describe('crew run takes a lane the merge train turned away back to its agent', () => {
  test('should reopen the conflicting and the refused lane once each, with the base merged in, a new pregate and receipt, and land them as a fast-forward', async () => {
    const r = baseRepo(join(root, 'repo'));
    for (const f of ['p1.txt', 'p2.txt']) writeFileSync(join(r.dir, f), twenty);
    git(r.dir, 'add', '.');
    git(r.dir, 'commit', '-qm', 'pairs');
    const turns = join(root, 'turns.log');
    const agent = join(root, 'agent.sh');
    const cases = Object.entries(EDITS)
      .map(([lane, [file, line]]) => `  ${lane}) sed -i '${line}s/.*/${lane}/' ${file} ;;`)
      .join('\n');
    // A first turn edits; a turn back (its own file already there) resolves what git marked, keeping both sides.
    writeFileSync(
      agent,
      [
        '#!/bin/sh',
        "{ printf '\\001' >&3; } 2>/dev/null",
        'lane=$(basename "$(dirname "$PWD")")',
        `echo "$lane" >> '${turns}'`,
        // lane-2's first turn back leaves the markers as git wrote them; laneward sends it back once more.
        `if [ "$lane" = lane-2 ] && [ -e own-lane-2.txt ] && [ ! -e '${root}/left' ]; then touch '${root}/left'`,
        // lane-4's turn back parks, once, for the crew's SIGKILL, and goes on (orphaned) when the test says so.
        `elif [ "$lane" = lane-4 ] && [ -e own-lane-4.txt ] && [ -e '${root}/park' ]; then rm -f '${root}/park'; touch '${root}/parked'; while [ ! -e '${root}/go' ]; do sleep 0.1; done`,
        'elif [ -e "own-$lane.txt" ]; then',
        "  for f in p1.txt p2.txt; do sed -i -e '/^<<<<<<< /d' -e '/^=======$/d' -e '/^>>>>>>> /d' \"$f\"; done",
        'else',
        '  case "$lane" in',
        cases,
        '  esac',
        '  echo x > "own-$lane.txt"',
        'fi',
        'printf \'{"text":"done","diff":true,"finish":true}\' > "$2"',
        '',
      ].join('\n'),
    );
    chmodSync(agent, 0o755);
    // The repository's check knows nothing of conflict markers (laneward looks for them itself); it logs each head it ran at.
    const check = join(root, 'check.sh');
    const checked = join(root, 'checked.log');
    writeFileSync(check, `#!/bin/sh\ngit rev-parse HEAD >> '${checked}'\nexit 0\n`);
    chmodSync(check, 0o755);

    const dir = join(root, 'crew');
    const file = writeDemoCrew({ dir, crew: 'back', lanes: 4, broken: 0, concurrency: 4, fixtures, instant: true });
    const value = JSON.parse(readFileSync(file, 'utf8'));
    value.workspace = { repo: r.dir, base: 'main' };
    value.runners.agent = [agent, '{prompt}', '{result}'];
    value.pregate = [{ id: 'markers', argv: [check] }];
    writeFileSync(file, JSON.stringify(value));
    const state = join(dir, 'state');
    const run = () => laneward(['crew', 'run', file, '--state', state], { cwd: dir, timeoutMs: 240_000 });
    const land = () => laneward(['crew', 'land', file, '--state', state], { cwd: dir, timeoutMs: 120_000 });
    const branchOf = (lane: string) => git(r.dir, 'for-each-ref', '--format=%(refname:short)', `refs/heads/laneward/back/*/${lane}`);
    const at = (lane: string) => git(r.dir, 'rev-parse', branchOf(lane));
    const s12 = (sha: string) => sha.slice(0, 12);
    const receiptOf = (lane: string) => JSON.parse(readFileSync(join(dir, 'runs', lane, 'ship-run.json'), 'utf8')) as Record<string, unknown>;
    const lanes = Object.keys(EDITS);
    const turnLog = () => readFileSync(turns, 'utf8').trim().split('\n').sort();
    // The crew's record (the console of a finished crew) is the last run's that ran lanes.
    // lmdb renews a read transaction once per event-loop turn: a turn passes first, so the read sees what the crew committed since.
    const fresh = async () => {
      await new Promise((resolve) => setImmediate(resolve));
      return openStore(state, { readOnly: true });
    };
    const recorded = async () => readCrewRun(await fresh(), 'back')?.startedAt;

    const first = run();
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(first.stdout).not.toMatch(/^LANE_REOPEN: /m);
    const heads = Object.fromEntries(lanes.map((l) => [l, at(l)]));
    const firstStarted = await recorded();
    git(r.dir, 'checkout', '-q', '--detach');

    const train = land();
    expect(train.code, train.stdout + train.stderr).toBe(1);
    expect(train.stdout.split('\n').filter((l) => l.startsWith('LAND: ')).map((l) => l.replace(/ from=\S+ to=\S+/, ''))).toEqual([
      'LAND: lane=lane-1 status=landed',
      'LAND: lane=lane-2 status=conflict code=LAND_CONFLICT',
      'LAND: lane=lane-3 status=landed',
      'LAND: lane=lane-4 status=refused code=RECEIPT_CARRY_PRODUCT_CHANGED',
    ]);
    const base = git(r.dir, 'rev-parse', 'refs/heads/main');
    expect(base).toBe(at('lane-3'));

    // The crew run again: the two lanes the train turned away go back to their agents, once
    // each. Killed (SIGKILL) during lane-4's turn back, then started again: the turn is
    // not sent again, its orphan's result is taken.
    writeFileSync(join(root, 'park'), '');
    const killed = spawn(process.execPath, [BUNDLE, 'crew', 'run', file, '--state', state], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let killedOut = '';
    killed.stdout.setEncoding('utf8').on('data', (text: string) => (killedOut += text));
    const exited = exitOf(killed).then(() => undefined);
    await until(() => existsSync(join(root, 'parked')), 120_000, "lane-4's turn back to park");
    // Killed once lane-2 has ended, so the kill lands in lane-4's turn alone: a kill between
    // a turn's dispatch and its spawn (a window a loaded CI hit) makes that turn a lost one,
    // counted as done, which is right, but not this test's case.
    await until(() => /^CREW_LANE: lane=lane-2 /m.test(killedOut), 120_000, 'lane-2 to end in the run to be killed');
    killed.kill('SIGKILL');
    await exited;
    writeFileSync(join(root, 'go'), '');
    const again = run();
    expect(again.code, again.stdout + again.stderr).toBe(0);
    // lane-2 ended in the killed run, lane-4 in this one: their lines are read across both.
    const lines = [...killedOut.split('\n'), ...again.stdout.split('\n')];
    expect(lines.filter((l) => l.startsWith('LANE_REOPEN: ')).sort()).toEqual([
      `LANE_REOPEN: lane=lane-2 code=LAND_CONFLICT base=${s12(base)} from=${s12(heads['lane-2']!)} branch=main`,
      `LANE_REOPEN: lane=lane-4 code=RECEIPT_CARRY_PRODUCT_CHANGED base=${s12(base)} from=${s12(heads['lane-4']!)} branch=main`,
    ]);
    expect(turnLog()).toEqual(['lane-1', 'lane-2', 'lane-2', 'lane-2', 'lane-3', 'lane-4', 'lane-4']);
    const againStarted = await recorded();
    expect(againStarted! > firstStarted!).toBe(true);
    const reopened = (await fresh()).crewLanes.get(['back', 'lane-2'])!;
    expect([reopened.stage, reopened.turnsDone, reopened.turnBase, reopened.reopen]).toEqual(['complete', 3, 1, { code: 'LAND_CONFLICT', branch: 'main', base, from: heads['lane-2'], merged: true, conflicts: ['p1.txt'] }]);
    for (const lane of ['lane-2', 'lane-4']) {
      const tip = at(lane);
      // The base came in by a merge: the refused head and the base's tip are its parents.
      const merge = git(r.dir, 'rev-list', '--merges', '-n', '1', tip);
      expect(git(r.dir, 'rev-list', '--parents', '-n', '1', merge).split(' ').slice(1)).toEqual([heads[lane], base]);
      expect(merge === tip).toBe(lane === 'lane-4');
      expect(lines).toContain(`PREGATE: lane=${lane} status=pass head=${s12(tip)} tree=${s12(git(r.dir, 'rev-parse', `${tip}^{tree}`))} checks=1 failed=- ms=${lines.find((l) => l.startsWith(`PREGATE: lane=${lane} `))?.match(/ ms=(\d+)/)?.[1]} file=${join(dir, 'runs', lane, 'pregate.json')}`);
      expect(lines.find((l) => l.startsWith(`SHIP_RECEIPT: lane=${lane} `))).toMatch(new RegExp(`^SHIP_RECEIPT: lane=${lane} head=${s12(tip)} base=${s12(base)} `));
      expect(lines.find((l) => l.startsWith(`CREW_LANE: lane=${lane} `))).toMatch(/ status=complete /);
      expect([receiptOf(lane).head, receiptOf(lane).base, receiptOf(lane).carried_from]).toEqual([tip, base, undefined]);
      expect(existsSync(join(dir, 'runs', lane, 'worktree'))).toBe(false);
    }
    // Their first turn back is a new prompt that says what the train said.
    const prompt = (lane: string) => readFileSync(join(dir, 'runs', lane, 'agent', 'turn-2.prompt.md'), 'utf8');
    expect(prompt('lane-2')).toMatch(/LAND_CONFLICT.*Files in conflict, with git's conflict markers: p1\.txt\./s);
    expect(prompt('lane-4')).toMatch(/RECEIPT_CARRY_PRODUCT_CHANGED.*in or around this lane's change in: p2\.txt\./s);
    expect(existsSync(join(dir, 'runs', 'lane-1', 'agent', 'turn-2.prompt.md'))).toBe(false);
    // lane-2's first turn back committed the merge with git's markers in it: no check ran there, the agent was told where they are.
    const marked = git(r.dir, 'rev-list', '--merges', '-n', '1', at('lane-2'));
    expect(git(r.dir, 'show', `${marked}:p1.txt`)).toMatch(/^<<<<<<< HEAD$/m);
    expect(readFileSync(join(dir, 'runs', 'lane-2', 'agent', 'turn-3.prompt.md'), 'utf8')).toContain('committed with conflict markers left at p1.txt:5, p1.txt:9: resolve each conflict there');
    expect(readFileSync(checked, 'utf8').split('\n')).not.toContain(marked);
    expect(readFileSync(checked, 'utf8').split('\n')).toContain(at('lane-2'));
    // The conflict resolved as the agent wrote it: both sides (the lane's own first, then the base's), no marker.
    expect(git(r.dir, 'show', `${at('lane-2')}:p1.txt`).split('\n').slice(3, 7)).toEqual(['line 4', 'lane-2', 'lane-1', 'line 6']);

    // Nothing to take back now: a third run sends no lane back, runs no turn.
    const third = run();
    // A crew run with nothing to run closes its pool while its workers may still load their
    // module; Node 20 then aborts at times (FATAL ERROR: v8::ToLocalChecked Empty MaybeLocal,
    // in piscina's worker), after the lanes' lines: that abort, and only it, is let pass here.
    if (third.code !== 0) expect(third.stderr, third.stdout + third.stderr).toContain('FATAL ERROR: v8::ToLocalChecked Empty MaybeLocal');
    expect(third.stdout.split('\n').filter((l) => /^(CREW_LANE|LANE_REOPEN): /.test(l)).map((l) => l.split(' ').slice(0, 3).join(' ')).sort()).toEqual(lanes.map((l) => `CREW_LANE: lane=${l} status=complete`));
    expect(turnLog()).toHaveLength(7);
    expect(await recorded()).toBe(againStarted);

    // Their receipts are current again: the train lands both, the base moving forward only.
    const tips = { 'lane-2': at('lane-2'), 'lane-4': at('lane-4') };
    const second = land();
    expect(second.code, second.stdout + second.stderr).toBe(0);
    expect(codesOf(second.stderr)).toEqual([]);
    const landed = second.stdout.split('\n').filter((l) => l.startsWith('LAND: ') || l.startsWith('CARRY: ') || l.startsWith('LAND_SUMMARY: '));
    const main = git(r.dir, 'rev-parse', 'refs/heads/main');
    expect(landed).toEqual([
      `LAND: lane=lane-1 status=landed from=${s12(heads['lane-1']!)} to=${s12(at('lane-1'))}`,
      'CARRY: current',
      `LAND: lane=lane-2 status=landed from=${s12(tips['lane-2'])} to=${s12(tips['lane-2'])}`,
      `LAND: lane=lane-3 status=landed from=${s12(heads['lane-3']!)} to=${s12(at('lane-3'))}`,
      expect.stringMatching(new RegExp(`^CARRY: carried from ${s12(tips['lane-4'])} to ${s12(main)} \\(rebase onto main at ${s12(tips['lane-2'])}, patch id unchanged\\)$`)),
      `LAND: lane=lane-4 status=landed from=${s12(tips['lane-4'])} to=${s12(main)}`,
      `LAND_SUMMARY: lanes=4 landed=4 conflict=0 refused=0 check_failed=0 base=${s12(main)}`,
    ]);
    // A fast-forward chain: the base before, lane-2's head, then lane-4's, each the next's ancestor.
    for (const [a, b] of [[base, tips['lane-2']], [tips['lane-2'], main]] as const) expect(git(r.dir, 'merge-base', '--is-ancestor', a, b)).toBe('');
    expect(git(r.dir, 'show', `${main}:p2.txt`).split('\n').slice(4, 8)).toEqual(['lane-3', 'line 6', 'line 7', 'lane-4']);
  });
});

describe('which lane goes back, and the base brought in', () => {
  test('should reopen only a conflict or a changed product diff at the head its receipt names on its branch, and merge the base once however often asked', async () => {
    const r = baseRepo(join(root, 'unit'));
    git(r.dir, 'checkout', '-q', '-b', 'lane');
    writeFileSync(join(r.dir, 'a.txt'), 'lane\n');
    git(r.dir, 'commit', '-qam', 'lane');
    const head = git(r.dir, 'rev-parse', 'HEAD');
    git(r.dir, 'checkout', '-q', 'main');
    writeFileSync(join(r.dir, 'a.txt'), 'base\n');
    writeFileSync(join(r.dir, 'base-only.txt'), 'from the base\n');
    git(r.dir, 'add', '.');
    git(r.dir, 'commit', '-qm', 'base');
    const base = git(r.dir, 'rev-parse', 'HEAD');
    git(r.dir, 'checkout', '-q', '--detach');
    const runDir = join(root, 'unit-run');
    mkdirSync(join(runDir, 'land'), { recursive: true });
    const said = (status: string, code: string | null, from = head) => writeFileSync(join(runDir, 'land', 'land.json'), JSON.stringify({ lane: 'l', status, from, to: null, code, already: false, branch: 'lane', base: 'main', at: '2026-01-01T00:00:00Z' }));
    const receipt = (over: Record<string, unknown> = {}) => writeFileSync(join(runDir, 'ship-run.json'), JSON.stringify({ schema_version: 1, head, base: r.base, repo: r.dir, branch: 'lane', ...over }));
    const ask = () => reopenable(r.dir, runDir, 'lane');
    receipt();
    expect(await ask()).toBeNull();
    const back = { code: 'LAND_CONFLICT', branch: 'main', base, from: head };
    said('conflict', 'LAND_CONFLICT');
    expect(await ask()).toEqual(back);
    said('refused', 'RECEIPT_CARRY_PRODUCT_CHANGED');
    expect(await ask()).toEqual({ ...back, code: 'RECEIPT_CARRY_PRODUCT_CHANGED' });
    // Other outcomes are not the agent's to rework: a failed check, a rejected lease, a stale or missing receipt.
    for (const [status, code] of [['check_failed', 'LAND_CHECK_FAILED'], ['refused', 'LAND_LEASE_REJECTED'], ['refused', 'QUEUE_RECEIPT_STALE'], ['refused', 'LAND_NOT_READY'], ['landed', null]] as const) {
      said(status, code);
      expect(await ask()).toBeNull();
    }
    // The train refused another head than the receipt's (a receipt written since: the lane came back already).
    said('conflict', 'LAND_CONFLICT', r.base);
    expect(await ask()).toBeNull();
    said('conflict', 'LAND_CONFLICT');
    // The branch moved past its receipt: stale, never reworked.
    git(r.dir, 'update-ref', 'refs/heads/lane', base);
    expect(await ask()).toBeNull();
    git(r.dir, 'update-ref', 'refs/heads/lane', head);
    expect(await ask()).toEqual(back);

    // The base comes in once: asked again (a crew killed after the merge, before it saved), the merge under way is taken as it stands.
    const wt = join(root, 'unit-wt');
    git(r.dir, 'worktree', 'add', '-q', wt, 'lane');
    expect(await bringBase(wt, back)).toEqual({ conflicts: ['a.txt'], touched: ['a.txt'] });
    expect(git(wt, 'rev-parse', 'MERGE_HEAD')).toBe(base);
    expect(readFileSync(join(wt, 'a.txt'), 'utf8')).toMatch(/^<<<<<<< HEAD\nlane\n=======\nbase\n>>>>>>> /);
    writeFileSync(join(wt, 'a.txt'), 'lane and base\n');
    expect(await bringBase(wt, back)).toEqual({ conflicts: ['a.txt'], touched: ['a.txt'] });
    // The turn's size counts what it adds beyond the base merged in: base-only.txt is the base's, not the turn's.
    expect((await turnBlobs(wt, head)).map((b) => b.path).sort()).toEqual(['a.txt', 'base-only.txt']);
    expect((await turnBlobs(wt, head, [base])).map((b) => b.path)).toEqual(['a.txt']);
    expect(readFileSync(join(wt, 'a.txt'), 'utf8')).toBe('lane and base\n');
    git(wt, 'add', 'a.txt');
    git(wt, 'commit', '-qm', 'merged');
    // Once committed the base is in the head: nothing to merge, nothing in conflict.
    expect(await bringBase(wt, back)).toEqual({ conflicts: [], touched: ['a.txt'] });
    expect(git(wt, 'rev-list', '--parents', '-n', '1', 'HEAD').split(' ').slice(1)).toEqual([head, base]);
    // Someone else's merge in the worktree is not aborted for it.
    git(wt, 'reset', '-q', '--hard', head);
    git(r.dir, 'branch', 'side', r.base);
    const side = join(root, 'unit-side');
    git(r.dir, 'worktree', 'add', '-q', side, 'side');
    writeFileSync(join(side, 'b.txt'), 'side\n');
    git(side, 'add', 'b.txt');
    git(side, 'commit', '-qm', 'side');
    git(wt, 'merge', '--no-commit', '--no-ff', '-q', 'side');
    const other = await bringBase(wt, back).catch((error: unknown) => error);
    expect(other instanceof LanewardError ? other.code : other).toBe('WORKSPACE_FAILED');
    expect(git(wt, 'rev-parse', 'MERGE_HEAD')).toBe(git(r.dir, 'rev-parse', 'side'));
    git(wt, 'merge', '--abort');
    for (const w of [wt, side]) git(r.dir, 'worktree', 'remove', '--force', w);
  });
});
