import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { writeDemoCrew } from '../main/demo/demo-crew.ts';
import { laneCheckLine, laneChecks } from '../formats/crew/lane-check.ts';
import { changedFiles, plannedFiles } from '../main/crew/lane-check.ts';
import { ensureBuilt, laneward } from './helpers/cli.ts';
import { killStrays } from './helpers/procs.ts';
import { baseRepo, git } from './helpers/git.ts';
import { tempRoot } from './helpers/tmp.ts';

// The lane check: each lane's planned and changed files against every other open lane.

const root = tempRoot('crew-lane-check');
const fixtures = join(import.meta.dirname, '..', 'fixtures');
let serial = 0;

beforeAll(() => ensureBuilt());
afterEach(() => {
  expect(killStrays(root)).toEqual([]);
});

describe('lane check lines', () => {
  test('should name the shared files and the other lanes, count a plan against a change, and say clear otherwise', () => {
    const checks = laneChecks([
      { lane: 'a', planned: ['src/x.ts'], changed: ['own-a.txt'] },
      { lane: 'b', planned: [], changed: ['src/x.ts', 'shared.txt', 'own-b.txt'] },
      { lane: 'c', planned: ['shared.txt'], changed: [] },
      { lane: 'd', planned: ['own-d.txt'], changed: ['own-d.txt'] },
    ]);
    expect(checks.map(laneCheckLine)).toEqual([
      'LANE_CHECK: lane=a status=overlap files=src/x.ts with=b planned=1 changed=1',
      'LANE_CHECK: lane=b status=overlap files=shared.txt,src/x.ts with=a,c planned=0 changed=3',
      'LANE_CHECK: lane=c status=overlap files=shared.txt with=b planned=1 changed=0',
      'LANE_CHECK: lane=d status=clear files=- with=- planned=1 changed=1',
    ]);
  });

  test('should escape a comma or a space in a path so the files field still splits', () => {
    const [check] = laneChecks([
      { lane: 'a', planned: [], changed: ['x,y z.txt'] },
      { lane: 'b', planned: ['x,y z.txt'], changed: [] },
    ]);
    expect(laneCheckLine(check!)).toBe('LANE_CHECK: lane=a status=overlap files=x%2Cy%20z.txt with=b planned=0 changed=1');
  });
});

describe('lane check facts', () => {
  test('should read planned files from every tasks.jsonl row that names some, normalised, and none when there is no export', () => {
    const dir = join(root, `run-${++serial}`);
    mkdirSync(dir);
    expect(plannedFiles(dir)).toEqual([]);
    const rows = [{ id: 't1', files: ['./src/x.ts', 'src//y.ts'] }, { id: 't2' }, { id: 't3', files: ['src/x.ts', 'docs/a.md'] }];
    writeFileSync(join(dir, 'tasks.jsonl'), rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
    expect(plannedFiles(dir)).toEqual(['src/x.ts', 'src/y.ts', 'docs/a.md']);
  });

  test('should list a branch\'s own changes from its merge base, both paths of a rename, and null for a branch that does not exist', async () => {
    const r = baseRepo(join(root, `repo-${++serial}`));
    git(r.dir, 'checkout', '-qb', 'lane');
    git(r.dir, 'mv', 'a.txt', 'moved.txt');
    writeFileSync(join(r.dir, 'new.txt'), 'n\n');
    git(r.dir, 'add', '.');
    git(r.dir, 'commit', '-qm', 'lane');
    // The base moves after the lane started: its change is not the lane's.
    git(r.dir, 'checkout', '-q', 'main');
    writeFileSync(join(r.dir, 'base-only.txt'), 'b\n');
    git(r.dir, 'add', '.');
    git(r.dir, 'commit', '-qm', 'base moves');
    expect((await changedFiles(r.dir, 'main', 'lane'))?.sort()).toEqual(['a.txt', 'moved.txt', 'new.txt']);
    expect(await changedFiles(r.dir, 'main', 'no-such-lane')).toBeNull();
  });
});

/** An agent that changes shared.txt (lanes 1 and 2) and a file of its own, then finishes. */
const agent = join(root, 'agent.sh');
writeFileSync(
  agent,
  `#!/bin/sh\n{ printf '\\001' >&3; } 2>/dev/null\nlane=$(basename "$(dirname "$PWD")")\ncase "$lane" in lane-3) ;; *) echo "$lane" >> shared.txt ;; esac\necho x >> "own-$lane.txt"\nprintf '{"text":"wrote","diff":true,"finish":true}' > "$2"\n`,
);
chmodSync(agent, 0o755);

/** A three-lane crew on a fresh repository whose agent is {@link agent}. */
function laneCrew(): { dir: string; file: string } {
  const r = baseRepo(join(root, `repo-${++serial}`));
  const dir = join(root, `crew-${++serial}`);
  const file = writeDemoCrew({ dir, crew: `lc${serial}`, lanes: 3, broken: 0, concurrency: 2, fixtures, instant: true });
  const value = JSON.parse(readFileSync(file, 'utf8'));
  value.workspace = { repo: r.dir };
  value.runners.agent = [agent, '{prompt}', '{result}'];
  writeFileSync(file, JSON.stringify(value));
  return { dir, file };
}

describe('lane check in a crew', () => {
  test('should print the check as an object per lane with --json', () => {
    const { dir, file } = laneCrew();
    const ran = laneward(['crew', 'run', file, '--state', join(dir, 'state'), '--json'], { cwd: dir, timeoutMs: 120_000 });
    expect(ran.code, ran.stdout + ran.stderr).toBe(0);
    const objects = ran.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { kind?: string });
    expect(objects.filter((o) => o.kind === 'lane_check')).toEqual([
      { kind: 'lane_check', lane: 'lane-1', status: 'overlap', files: ['shared.txt'], with: ['lane-2'], planned: 0, changed: 2 },
      { kind: 'lane_check', lane: 'lane-2', status: 'overlap', files: ['shared.txt'], with: ['lane-1'], planned: 0, changed: 2 },
      { kind: 'lane_check', lane: 'lane-3', status: 'clear', files: [], with: [], planned: 0, changed: 1 },
    ]);
    expect(Object.keys(objects.at(-1)!)).toEqual(['summary']);
  });

  test('should print one LANE_CHECK line per lane before the summary and put it on the report\'s lanes', () => {
    const { dir, file } = laneCrew();
    const report = join(dir, 'report.json');
    const ran = laneward(['crew', 'run', file, '--state', join(dir, 'state'), '--report', report], { cwd: dir, timeoutMs: 120_000 });
    expect(ran.code, ran.stdout + ran.stderr).toBe(0);
    const lines = ran.stdout.split('\n').filter((l) => /^(LANE_CHECK|CREW_SUMMARY): /.test(l));
    expect(lines.map((l) => l.replace(/ duration_s=\S+/, ''))).toEqual([
      'LANE_CHECK: lane=lane-1 status=overlap files=shared.txt with=lane-2 planned=0 changed=2',
      'LANE_CHECK: lane=lane-2 status=overlap files=shared.txt with=lane-1 planned=0 changed=2',
      'LANE_CHECK: lane=lane-3 status=clear files=- with=- planned=0 changed=1',
      expect.stringMatching(/^CREW_SUMMARY: lanes=3 complete=3 failed=0 interrupted=0 attempts=\d+$/),
    ]);
    const lanes = JSON.parse(readFileSync(report, 'utf8')).lanes as { lane_check: unknown }[];
    expect(lanes.map((l) => l.lane_check)).toEqual([
      { status: 'overlap', files: ['shared.txt'], with: ['lane-2'], planned: 0, changed: 2 },
      { status: 'overlap', files: ['shared.txt'], with: ['lane-1'], planned: 0, changed: 2 },
      { status: 'clear', files: [], with: [], planned: 0, changed: 1 },
    ]);
  });
});

describe('lane check on the console', () => {
  test('should keep the check on the lane\'s view through its later changes', async () => {
    const { CrewView } = await import('../main/console/view-state.ts');
    const view = new CrewView('c', () => ({ running: 0, queued: 0, started: 0, finished: 0, marks: 0, renewalLatencyMs: [] }), ['a', 'b']);
    const [a] = laneChecks([
      { lane: 'a', planned: [], changed: ['x'] },
      { lane: 'b', planned: ['x'], changed: [] },
    ]);
    view.laneCheck(a!);
    expect(view.snapshot().lanes.map((l) => l.check ?? null)).toEqual([{ status: 'overlap', files: ['x'], with: ['b'] }, null]);
    view.update({ crew: 'c', lane: 'a', stage: 'complete', runDir: '/r', turnsDispatched: 1, turnsDone: 1, lostTurns: [], guidance: null, attempts: 1, stoppedIn: null, code: null, detail: null, updatedAt: new Date().toISOString() });
    expect(view.snapshot().lanes[0]).toMatchObject({ state: 'complete', check: { status: 'overlap', files: ['x'], with: ['b'] } });
  });
});
