import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { writeDemoCrew } from '../main/demo/demo-crew.ts';
import { filesOfLine } from '../formats/review/plan-files.ts';
import { parsePlan, sectionItems } from '../formats/review/plan-doc.ts';
import { laneOrder, laneOrderLine } from '../formats/crew/lane-order.ts';
import { driveParked } from '../main/crew/owner-wait.ts';
import type { LaneProgress } from '../formats/crew/record.ts';
import { codesOf, ensureBuilt, laneward } from './helpers/cli.ts';
import { CrewView } from '../main/console/view-state.ts';
import { DEFAULT_UI, renderCrewView } from '../formats/console/view.ts';
import { killStrays, until } from './helpers/procs.ts';
import { baseRepo } from './helpers/git.ts';
import { tempRoot } from './helpers/tmp.ts';

// Lanes whose plans overlap: the files a plan names, tasks.jsonl `files`, and `"overlap": "order"`.

const root = tempRoot('crew-overlap');
const fixtures = join(import.meta.dirname, '..', 'fixtures');
let serial = 0;

beforeAll(() => ensureBuilt());
afterEach(() => {
  expect(killStrays(root)).toEqual([]);
});

describe('plan files', () => {
  test.each([
    ['  Files: `src/a.ts`, `test/a.test.ts`', ['src/a.ts', 'test/a.test.ts']],
    ['   - Files: src/a.ts, src/b.ts', ['src/a.ts', 'src/b.ts']],
    ['  2. files: ./src//a.ts src/a.ts', ['src/a.ts']],
    ['  Files: `src/x.ts` and `docs/` too', ['src/x.ts', 'docs']],
    ['  Files: `/etc/passwd`, `../up.txt`, `a/../../up.txt`, `.`, `C:\\x`, `ok.txt`', ['ok.txt']],
    ['  Files: `a/../b.txt`', ['b.txt']],
    ['  Files:', []],
    ['Files: `top.txt`', null],
    ['  The files: `x.ts`', null],
  ])('should read %j as %j', (line, files) => {
    expect(filesOfLine(line)).toEqual(files);
  });

  test('should give each item the files of its own Files: lines, none before the first item or inside a fence', () => {
    const plan = [
      '# T',
      '',
      '## Implementation plan',
      '',
      'Files: `nobody.txt`',
      '',
      '1. Add subtraction.',
      '   Files: `src/calc.ts`',
      '   - Files: `test/calc.test.ts`, `src/calc.ts`',
      '2. Document it.',
      '   ```',
      '   Files: `fenced.txt`',
      '   ```',
      '3. Release.',
      '   - Files: `docs/a.md`',
      '',
      '## Review record',
      '',
    ].join('\n');
    const parsed = parsePlan(plan);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.plan.items).toEqual(['Add subtraction.', 'Document it.', 'Release.']);
    expect(sectionItems(parsed.plan.implementation).files).toEqual([['src/calc.ts', 'test/calc.test.ts'], [], ['docs/a.md']]);
  });
});

describe('lane order', () => {
  test('should make each lane wait for the earlier lanes sharing a file, and name none for a lane sharing nothing', () => {
    const order = laneOrder([
      { lane: 'a', files: ['x.ts', 'y.ts'] },
      { lane: 'b', files: ['q.ts'] },
      { lane: 'c', files: ['y.ts', 'x.ts'] },
      { lane: 'd', files: ['x.ts', 'q.ts'] },
    ]);
    expect(order.conflicts).toEqual([[2, 3], [3], [0, 3], [0, 1, 2]]);
    expect(order.events.map(laneOrderLine)).toEqual(['LANE_ORDER: lane=c after=a files=x.ts,y.ts', 'LANE_ORDER: lane=d after=a,b,c files=q.ts,x.ts']);
  });
});

describe('lane order on the console', () => {
  test('should keep a lane\'s order on its view through its changes, and say on its row whom it waits for and why', () => {
    const view = new CrewView('c', () => ({ running: 0, queued: 0, started: 0, finished: 0, marks: 0, renewalLatencyMs: [] }), ['a', 'b']);
    const [event] = laneOrder([
      { lane: 'a', files: ['x<y>.ts'] },
      { lane: 'b', files: ['x<y>.ts'] },
    ]).events;
    view.laneOrder(event!);
    expect(view.snapshot().lanes.map((l) => l.order ?? null)).toEqual([null, { after: ['a'], files: ['x<y>.ts'] }]);
    expect(renderCrewView(view.snapshot(), DEFAULT_UI)).toContain('<span class="order" data-after="a">waits for a (x&lt;y&gt;.ts)</span>');
    view.update({ crew: 'c', lane: 'b', stage: 'complete', runDir: '/r', turnsDispatched: 1, turnsDone: 1, lostTurns: [], guidance: null, attempts: 1, stoppedIn: null, code: null, detail: null, updatedAt: new Date().toISOString() });
    expect(view.snapshot().lanes[1]).toMatchObject({ state: 'complete', order: { after: ['a'], files: ['x<y>.ts'] } });
    expect(renderCrewView(view.snapshot(), DEFAULT_UI)).toContain('<span class="order" data-after="a">ran after a (x&lt;y&gt;.ts)</span>');
  });
});

/** Lanes driven by hand: each drive waits for the test to end it. */
function handDriven(parkedAt: Set<number> = new Set()) {
  const starts: number[] = [];
  const ends = new Map<number, () => void>();
  const decided = new Set<number>();
  // Each look at a parked lane's gate that found it answered: the handshake that the crew has seen the answer.
  let answeredLooks = 0;
  const progress = (index: number, stage: string) => ({ lane: `l${index}`, stage }) as unknown as LaneProgress;
  const steps = {
    drive: (index: number) => {
      starts.push(index);
      return new Promise<LaneProgress>((resolve) => ends.set(index, () => resolve(progress(index, parkedAt.has(index) && !decided.has(index) ? 'gate_pending' : 'complete'))));
    },
    parked: (p: LaneProgress) => p.stage === ('gate_pending' as LaneProgress['stage']),
    decided: (p: LaneProgress) => {
      const yes = decided.has(Number(p.lane.slice(1)));
      if (yes) answeredLooks += 1;
      return yes;
    },
    ended: () => undefined,
  };
  const end = (index: number) => {
    const resolve = ends.get(index);
    ends.delete(index);
    resolve!();
  };
  return { starts, steps, end, decided, running: () => [...ends.keys()].sort(), answeredLooks: () => answeredLooks };
}

describe('ordered lanes driven', () => {
  test('should start an overlapping lane only after the earlier one ended, and start lanes without overlap past it', async () => {
    const lanes = handDriven();
    const cancel = new AbortController();
    // 0 and 1 share a file; 2 and 3 share nothing with anyone.
    const done = driveParked(4, { lanesAtOnce: 2, ownerWaitMs: 0, cancel: cancel.signal, conflicts: [[1], [0], [], []] }, lanes.steps);
    await until(() => lanes.starts.length === 2, 5_000, 'two lanes started');
    expect(lanes.running()).toEqual([0, 2]);
    lanes.end(2);
    await until(() => lanes.starts.length === 3, 5_000, 'lane 3 started');
    expect(lanes.running()).toEqual([0, 3]);
    lanes.end(0);
    await until(() => lanes.starts.length === 4, 5_000, 'lane 1 started');
    expect(lanes.running()).toEqual([1, 3]);
    lanes.end(1);
    lanes.end(3);
    expect((await done).map((p) => p.lane)).toEqual(['l0', 'l1', 'l2', 'l3']);
    expect(lanes.starts).toEqual([0, 2, 3, 1]);
  });

  test('should run 1,000 lanes that all name one file one at a time in file order, each look cheap', async () => {
    const n = 1_000;
    const all = laneOrder(Array.from({ length: n }, (_, i) => ({ lane: `l${i}`, files: ['package.json', `own-${i}`] })));
    const starts: number[] = [];
    let inFlight = 0;
    let most = 0;
    const steps = {
      drive: async (index: number) => {
        starts.push(index);
        most = Math.max(most, ++inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        inFlight -= 1;
        return { lane: `l${index}`, stage: 'complete' } as unknown as LaneProgress;
      },
      parked: () => false,
      decided: () => false,
      ended: () => undefined,
    };
    const began = performance.now();
    await driveParked(n, { lanesAtOnce: 8, ownerWaitMs: 0, cancel: new AbortController().signal, conflicts: all.conflicts }, steps);
    expect(starts).toEqual(Array.from({ length: n }, (_, i) => i));
    expect(most).toBe(1);
    // A budget of seconds on a loaded machine (0.3 s measured here; a look that scanned each lane's conflicts took 1.6 s, growing with the cube of the lanes).
    expect(performance.now() - began).toBeLessThan(20_000);
  });

  test('should let a later overlapping lane run while the earlier one is parked at its gate, and drive the answered one on only after it', async () => {
    const lanes = handDriven(new Set([0]));
    const cancel = new AbortController();
    const done = driveParked(2, { lanesAtOnce: 2, ownerWaitMs: 60_000, cancel: cancel.signal, conflicts: [[1], [0]] }, lanes.steps);
    await until(() => lanes.starts.length === 1, 5_000, 'lane 0 started');
    lanes.end(0);
    await until(() => lanes.starts.length === 2, 5_000, 'lane 1 started while 0 is parked');
    lanes.decided.add(0);
    // Answered while lane 1 runs: once the crew has seen the answer (and picked in the same turn), lane 0 still waits for lane 1.
    await until(() => lanes.answeredLooks() > 0, 5_000, 'the answer seen');
    await new Promise((resolve) => setImmediate(resolve));
    expect(lanes.starts).toEqual([0, 1]);
    lanes.end(1);
    await until(() => lanes.starts.length === 3, 5_000, 'lane 0 driven on');
    lanes.end(0);
    await done;
    expect(lanes.starts).toEqual([0, 1, 0]);
  });
});

/**
 * The agent: lanes 1 and 2 change shared.txt, every lane a file of its own. Lane 1 waits
 * for lane 3's mark before it changes anything (renewing its lease meanwhile): it ends only
 * if lane 3 ran beside it. Each agent logs its start and end.
 */
const agent = join(root, 'agent.sh');
const marks = join(root, 'marks');
mkdirSync(marks);
writeFileSync(
  agent,
  [
    '#!/bin/sh',
    "mark() { { printf '\\001' >&3; } 2>/dev/null; }",
    'mark',
    'lane=$(basename "$(dirname "$PWD")")',
    `log=${marks}/log`,
    'echo "start $lane" >> "$log"',
    'case "$lane" in',
    `  lane-1) i=0; while [ ! -e ${marks}/lane-3 ] && [ $i -lt 1200 ]; do mark; sleep 0.1; i=$((i+1)); done; [ -e ${marks}/lane-3 ] || echo "lane-1 never saw lane-3" >> "$log" ;;`,
    `  lane-3) : > ${marks}/lane-3 ;;`,
    'esac',
    'case "$lane" in lane-3) ;; *) echo "$lane" >> shared.txt ;; esac',
    'echo x >> "own-$lane.txt"',
    'echo "end $lane" >> "$log"',
    `printf '{"text":"wrote","diff":true,"finish":true}' > "$2"`,
    '',
  ].join('\n'),
);
chmodSync(agent, 0o755);

const planOf = (n: number, files: string) => `# Plan: lane ${n}\n\n## Implementation plan\n\n1. Change the shared file.\n   - Files: ${files}\n2. Add a file of its own.\n   - Files: \`own-lane-${n}.txt\`\n\n## Review record\n\nNothing yet.\n`;

/** A three-lane crew on a fresh repository: lanes 1 and 2 plan shared.txt, lane 3 plans only its own file. */
function orderedCrew(overlap: string | undefined, workspace = true): { dir: string; file: string } {
  const r = baseRepo(join(root, `repo-${++serial}`));
  const dir = join(root, `crew-${++serial}`);
  const file = writeDemoCrew({ dir, crew: `ov${serial}`, lanes: 3, broken: 0, concurrency: 2, fixtures, instant: true });
  writeFileSync(join(dir, 'plans', 'lane-1.md'), planOf(1, '`shared.txt`, `./docs//notes.md`'));
  writeFileSync(join(dir, 'plans', 'lane-2.md'), planOf(2, '`shared.txt`'));
  writeFileSync(join(dir, 'plans', 'lane-3.md'), planOf(3, '`docs/three.md`'));
  const value = JSON.parse(readFileSync(file, 'utf8'));
  if (workspace) value.workspace = { repo: r.dir };
  if (overlap !== undefined) value.overlap = overlap;
  value.runners.agent = [agent, '{prompt}', '{result}'];
  writeFileSync(file, JSON.stringify(value));
  return { dir, file };
}

describe('an ordered crew', () => {
  test('should refuse an overlap order without a workspace, and an overlap it does not know, before anything runs', () => {
    for (const [overlap, workspace] of [['order', false], ['serial', true]] as const) {
      const { dir, file } = orderedCrew(overlap, workspace);
      const ran = laneward(['crew', 'run', file, '--state', join(dir, 'state')], { cwd: dir, timeoutMs: 60_000 });
      expect(ran.code, ran.stderr).toBe(2);
      expect(codesOf(ran.stderr)).toEqual(['CREW_INVALID']);
      expect(ran.stderr).toContain('overlap');
    }
  });

  test('should run lane 2 after lane 1 whose plan shares its file, lane 3 beside lane 1, and export each plan\'s files', () => {
    const { dir, file } = orderedCrew('order');
    const state = join(dir, 'state');
    const report = join(dir, 'report.json');
    const ran = laneward(['crew', 'run', file, '--state', state, '--report', report], { cwd: dir, timeoutMs: 240_000 });
    expect(ran.code, ran.stdout + ran.stderr).toBe(0);
    const out = ran.stdout.split('\n');
    // Said before any lane ends: lane 2 waits for lane 1, for the file their plans share.
    const order = out.findIndex((l) => l.startsWith('LANE_ORDER: '));
    expect(out.filter((l) => l.startsWith('LANE_ORDER: '))).toEqual(['LANE_ORDER: lane=lane-2 after=lane-1 files=shared.txt']);
    expect(order).toBeLessThan(out.findIndex((l) => l.startsWith('CREW_LANE: ')));
    // Lane 1 ended at all only because lane 3 ran beside it; lane 2's agent started after lane 1's ended.
    const log = readFileSync(join(marks, 'log'), 'utf8').trim().split('\n');
    expect(log).not.toContain('lane-1 never saw lane-3');
    expect(log.indexOf('start lane-2')).toBeGreaterThan(log.indexOf('end lane-1'));
    // Lane 2's first stage began no earlier than lane 1 completed: it did not run beside it at all.
    const stages = (lane: string) => {
      const status = laneward(['crew', 'status', file, '--state', state, '--lane', lane], { cwd: dir, timeoutMs: 60_000 });
      expect(status.code, status.stderr).toBe(0);
      return status.stdout.split('\n').filter((l) => l.startsWith('LANE_STAGE: ')).map((l) => ({ stage: /stage=(\S+)/.exec(l)![1]!, at: /started_at=(\S+)/.exec(l)![1]! }));
    };
    const lane1Complete = stages('lane-1').find((s) => s.stage === 'complete')!.at;
    expect(stages('lane-2')[0]!.at >= lane1Complete).toBe(true);
    // The export names each item's files; the lane check counts them as planned.
    const tasks = readFileSync(join(dir, 'runs', 'lane-1', 'tasks.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { item?: string; files?: string[] });
    expect(tasks.filter((t) => t.item !== undefined).map((t) => t.files)).toEqual([['shared.txt', 'docs/notes.md'], ['own-lane-1.txt']]);
    expect(out.filter((l) => l.startsWith('LANE_CHECK: '))).toEqual([
      'LANE_CHECK: lane=lane-1 status=overlap files=shared.txt with=lane-2 planned=3 changed=2',
      'LANE_CHECK: lane=lane-2 status=overlap files=shared.txt with=lane-1 planned=2 changed=2',
      'LANE_CHECK: lane=lane-3 status=clear files=- with=- planned=2 changed=1',
    ]);
    // The report's lanes: the order beside the check.
    const reported = JSON.parse(readFileSync(report, 'utf8')).lanes as { lane_order?: unknown }[];
    expect(reported.map((l) => l.lane_order ?? null)).toEqual([null, { after: ['lane-1'], files: ['shared.txt'] }, null]);
    const valid = laneward(['artifact', 'validate', join(dir, 'runs', 'lane-1')], { cwd: dir, timeoutMs: 60_000 });
    expect(valid.code, valid.stderr).toBe(0);
    expect(valid.stdout).toMatch(/^ARTIFACT_VALID: run=\S+ status=complete$/m);
  });
});
