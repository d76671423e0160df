import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import type { CrewSnapshot } from '../formats/console/snapshot.ts';
import { writeDemoCrew } from '../main/demo/demo-crew.ts';
import { codesOf, ensureBuilt, laneward, ROOT } from './helpers/cli.ts';
import { served } from './helpers/served.ts';
import { EventStream, httpRequest } from './helpers/sse.ts';
import { tempRoot } from './helpers/tmp.ts';

// A crew after the fact: crew status and crew view read the store a finished crew left,
// and show what the crew's own console showed at its end.

const root = tempRoot('crew-console');
beforeAll(() => ensureBuilt());


/** What a finished crew's console shows, without what only a live process measures. */
const lasting = (s: CrewSnapshot) => {
  const { source: _source, marksPerSecond: _rate, ...rest } = s;
  return rest;
};

describe('a finished crew, read from its store', () => {
  const dir = join(root, 'done');
  const file = writeDemoCrew({ dir, crew: 'after', lanes: 12, broken: 2, concurrency: 3, fixtures: join(ROOT, 'fixtures'), instant: true });
  const state = join(dir, 'state');
  let live: CrewSnapshot;
  let lanes: string[];

  test('crew run --serve: the console its viewer saw at the end', async () => {
    const run = served(['crew', 'run', file, '--state', state, '--serve', '0'], dir);
    const events = await EventStream.open(`${await run.url}events`);
    expect(await run.exited).toBe(1);
    await events.waitForSnapshots(1);
    live = events.snapshots.at(-1) as CrewSnapshot;
    events.destroy();
    expect(live.done).toBe(true);
    lanes = run.out().split('\n').filter((line) => line.startsWith('CREW_LANE: '));
    expect(lanes).toHaveLength(12);
    expect(live.summary).toBe(run.out().split('\n').find((line) => line.startsWith('CREW_SUMMARY: ')));
  });

  test('crew status --json: the same snapshot as the live console at its end', () => {
    const status = laneward(['crew', 'status', file, '--state', state, '--json'], { cwd: dir });
    expect(status.code).toBe(1);
    const read = JSON.parse(status.stdout) as CrewSnapshot;
    expect(read.source).toBe('store');
    expect(lasting(read)).toEqual(lasting(live));
  });

  test('crew run --serve again on the finished crew: it runs nothing and keeps the recorded run (attempts, duration, start)', async () => {
    const again = served(['crew', 'run', file, '--state', state, '--serve', '0'], dir);
    await again.url;
    expect(await again.exited).toBe(1);
    expect(again.out().split('\n').find((line) => line.startsWith('CREW_SUMMARY: '))).toMatch(/ attempts=0 /);
    const read = JSON.parse(laneward(['crew', 'status', file, '--state', state, '--json'], { cwd: dir }).stdout) as CrewSnapshot;
    expect(read.attempts.started).toBeGreaterThan(0);
    expect(lasting(read)).toEqual(lasting(live));
  });

  test('crew status: the crew line, one line per lane that needs the operator, the retry command', () => {
    const status = laneward(['crew', 'status', file, '--state', state], { cwd: dir });
    expect(status.code).toBe(1);
    const lines = status.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^CREW_STATUS: crew=after run=done lanes=12 queued=0 bootstrap=0 review=0 answer=0 work=0 pregate=0 cross-check=0 export=0 complete=10 failed=2 interrupted=0 lanes_per_min=\d+\.\d\d eta_s=0 spend_usd=0\.000000 cap_usd=- unpriced=(\d+)$/);
    // The demo's runners are argv programs with no stream: every call of theirs is of unknown cost.
    expect(Number(/unpriced=(\d+)$/.exec(lines[0]!)![1])).toBe(lanes.reduce((sum, line) => sum + Number(/ unpriced=(\d+) /.exec(line)![1]), 0));
    const failed = lanes.filter((line) => line.includes(' status=failed '));
    const needs = lines.filter((line) => line.startsWith('CREW_NEEDS: '));
    expect(needs.map((line) => /lane=(\S+) need=failed state=failed code=(\S+)/.exec(line)?.slice(1).join(' ')).sort()).toEqual(
      failed.map((line) => /lane=(\S+) status=failed code=(\S+)/.exec(line)!.slice(1).join(' ')).sort(),
    );
    // The retry command is the one the lane lines printed, runnable as written (before the failed call's stderr line, which ends the detail).
    expect(lines.at(-1)).toBe(`CREW_RETRY: ${/; retry: (.*?)(?:; stderr: [^;]*)?$/.exec(failed[0]!)![1]}`);
  });

  test('crew view --serve: the same pages from the store, until interrupted', async () => {
    const view = served(['crew', 'view', file, '--state', state, '--serve', '0'], dir);
    const url = await view.url;
    const snapshot = JSON.parse((await httpRequest(`${url}snapshot.json`)).body) as CrewSnapshot;
    expect(lasting(snapshot)).toEqual(lasting(live));
    const page = await httpRequest(url);
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect(page.body).toContain('<section id="attention" data-count="2">');
    expect((await httpRequest(`${url}lanes/no-such-lane.json`)).status).toBe(404);
    expect((await httpRequest(`${url}lanes/%E0%A4%A.json`)).status).toBe(400);
    expect((await httpRequest(`${url}lanes/..%2F..%2Fetc%2Fpasswd`)).status).toBe(404);
    expect((await httpRequest(url, { host: 'evil.example' })).status).toBe(403);
    view.child.kill('SIGTERM');
    expect(await view.exited).toBe(0);
  });
});

/** A demo crew whose file sets `limits`. */
function cappedCrew(name: string, lanes: number, limits: Record<string, number>): { file: string; state: string; dir: string } {
  const dir = join(root, name);
  const file = writeDemoCrew({ dir, crew: name, lanes, broken: 0, concurrency: 3, fixtures: join(ROOT, 'fixtures'), instant: true });
  const crew = JSON.parse(readFileSync(file, 'utf8')) as { limits: Record<string, number> };
  crew.limits = { ...crew.limits, ...limits };
  writeFileSync(file, JSON.stringify(crew));
  return { file, state: join(dir, 'state'), dir };
}

const laneField = (line: string, key: string) => new RegExp(` ${key}=(\\S+)`).exec(line)?.[1];

describe("a crew's spend cap, over every call of every lane", () => {
  test('crew status names the cap the crew file sets, not the cap times the lanes; every call of unknown cost is counted', () => {
    const crew = cappedCrew('capped', 5, { spend_cap_usd: 20, reserve_usd: 0.05 });
    const ran = laneward(['crew', 'run', crew.file, '--state', crew.state], { cwd: crew.dir });
    expect(ran.code, ran.stdout + ran.stderr).toBe(0);
    const lanes = ran.stdout.split('\n').filter((line) => line.startsWith('CREW_LANE: '));
    expect(lanes.map((line) => laneField(line, 'status'))).toEqual(Array(5).fill('complete'));
    // Reviewers, observers and agents alike: every child the crew started is one unpriced call.
    const attempts = Number(/ attempts=(\d+) /.exec(ran.stdout.split('\n').find((l) => l.startsWith('CREW_SUMMARY: '))!)![1]);
    const unpriced = lanes.reduce((sum, line) => sum + Number(laneField(line, 'unpriced')), 0);
    expect(unpriced).toBe(attempts);
    expect(lanes.map((line) => laneField(line, 'cost_usd'))).toEqual(Array(5).fill('0.000000'));
    const status = laneward(['crew', 'status', crew.file, '--state', crew.state], { cwd: crew.dir });
    expect(status.stdout.split('\n')[0]).toMatch(new RegExp(` spend_usd=0\\.000000 cap_usd=20\\.00 unpriced=${attempts}$`));
  });

  test('calls of unknown cost fill the cap at their reservation: the next call of any lane is refused SPEND_CAP_EXCEEDED and nothing starts past it', () => {
    // $1 and $0.50 a call: two calls (two lanes' observer bootstraps) fill it, whichever lanes they are.
    const crew = cappedCrew('full', 3, { spend_cap_usd: 1, reserve_usd: 0.5 });
    const ran = laneward(['crew', 'run', crew.file, '--state', crew.state], { cwd: crew.dir });
    expect(ran.code, ran.stdout + ran.stderr).toBe(1);
    const lanes = ran.stdout.split('\n').filter((line) => line.startsWith('CREW_LANE: '));
    expect(lanes.map((line) => `${laneField(line, 'status')} ${laneField(line, 'code')}`)).toEqual(Array(3).fill('failed SPEND_CAP_EXCEEDED'));
    expect(ran.stdout).toMatch(/^CREW_SUMMARY: lanes=3 complete=0 failed=3 interrupted=0 attempts=2 /m);
    expect(lanes.reduce((sum, line) => sum + Number(laneField(line, 'unpriced')), 0)).toBe(2);
  });
});

describe('crew status and crew view refuse what they cannot read', () => {
  const dir = join(root, 'bad');
  mkdirSync(dir, { recursive: true });
  const file = writeDemoCrew({ dir, crew: 'never', lanes: 3, broken: 0, concurrency: 2, fixtures: join(ROOT, 'fixtures'), instant: true });

  test.each([
    [['crew', 'status'], 2, 'USAGE'],
    [['crew', 'status', 'a.json', 'b.json'], 2, 'USAGE'],
    [['crew', 'status', join(dir, 'missing.json')], 2, 'CREW_INVALID'],
    [['crew', 'status', '--stuck-after', 'soon', 'x.json'], 2, 'USAGE'],
    [['crew', 'view', 'x.json'], 2, 'USAGE'],
    [['crew', 'view', 'x.json', '--serve', '70000'], 2, 'USAGE'],
  ])('laneward %j exits %i with %s', (args, code, name) => {
    const r = laneward(args as string[], { cwd: dir });
    expect(r.code).toBe(code);
    expect(codesOf(r.stderr)).toEqual([name]);
    expect(r.stdout).toBe('');
  });

  test('a crew file that is not JSON is CREW_INVALID', () => {
    writeFileSync(join(dir, 'junk.json'), '{"crew": ');
    const r = laneward(['crew', 'status', 'junk.json', '--state', join(dir, 'state')], { cwd: dir });
    expect([r.code, codesOf(r.stderr)]).toEqual([2, ['CREW_INVALID']]);
  });

  test('a state root that does not exist is STATE_UNAVAILABLE, and is not made', () => {
    const r = laneward(['crew', 'status', file, '--state', join(dir, 'nowhere')], { cwd: dir });
    expect([r.code, codesOf(r.stderr)]).toEqual([1, ['STATE_UNAVAILABLE']]);
  });

  test('a crew never run on an existing root: every lane queued, run=stopped, exit 0', () => {
    const stateDir = join(dir, 'empty-state');
    mkdirSync(stateDir);
    // Another crew's run makes the root a store.
    const other = writeDemoCrew({ dir: join(dir, 'other'), crew: 'other', lanes: 1, broken: 0, concurrency: 1, fixtures: join(ROOT, 'fixtures'), instant: true });
    expect(laneward(['crew', 'run', other, '--state', stateDir], { cwd: dir }).code).toBe(0);
    const r = laneward(['crew', 'status', file, '--state', stateDir], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n')).toEqual([
      'CREW_STATUS: crew=never run=stopped lanes=3 queued=3 bootstrap=0 review=0 answer=0 work=0 pregate=0 cross-check=0 export=0 complete=0 failed=0 interrupted=0 lanes_per_min=- eta_s=- spend_usd=0.000000 cap_usd=- unpriced=0',
    ]);
  });

  test('a root an earlier laneward wrote (no crew-runs database) is read without it', async () => {
    const old = join(dir, 'old-state');
    mkdirSync(old);
    const { open } = await import('lmdb');
    const env = open({ path: old, maxDbs: 16 });
    for (const name of ['runs', 'journal', 'blobs', 'history', 'crew-lanes', 'crew-drivers', 'lanes', 'laneJournal']) env.openDB({ name });
    await env.close();
    const r = laneward(['crew', 'status', file, '--state', old], { cwd: dir });
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toMatch(/^CREW_STATUS: crew=never run=stopped lanes=3 queued=3 /);
  });
});
