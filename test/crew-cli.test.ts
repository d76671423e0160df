import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { writeDemoCrew } from '../main/demo/demo-crew.ts';
import { BUNDLE, ensureBuilt, laneward, ROOT } from './helpers/cli.ts';
import { exitOf, killStrays, settleTagged, until } from './helpers/procs.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('crew-cli');
const fixtures = join(ROOT, 'fixtures');
let serial = 0;

beforeAll(() => ensureBuilt());

afterEach(() => {
  expect(killStrays(root)).toEqual([]);
});

function crew(lanes: number, broken: number, edit?: (crew: Record<string, any>) => void) {
  const dir = join(root, `crew-${++serial}`);
  const file = writeDemoCrew({ dir, crew: `c${serial}`, lanes, broken, concurrency: 6, fixtures });
  if (edit !== undefined) {
    const value = JSON.parse(readFileSync(file, 'utf8'));
    edit(value);
    writeFileSync(file, JSON.stringify(value));
  }
  return { dir, file, state: join(dir, 'state'), log: join(dir, 'starts.log') };
}

const lines = (text: string, prefix: string) => text.split('\n').filter((l) => l.startsWith(prefix));
const field = (line: string, name: string) => new RegExp(`(?:^| )${name}=(\\S+)`).exec(line)?.[1];

describe('laneward crew run', () => {
  it('should type every failure of a mixed crew and complete, export and validate every healthy lane', () => {
    const c = crew(10, 5);
    const report = join(c.dir, 'report.json');
    const result = laneward(['crew', 'run', c.file, '--state', c.state, '--report', report], { cwd: c.dir });
    expect(result.code).toBe(1);
    const ends = lines(result.stdout, 'CREW_LANE: ');
    expect(ends).toHaveLength(10);
    const failed = ends.filter((l) => field(l, 'status') === 'failed');
    const complete = ends.filter((l) => field(l, 'status') === 'complete');
    expect(failed).toHaveLength(5);
    expect(complete).toHaveLength(5);
    for (const line of failed) expect(field(line, 'code')).toMatch(/^[A-Z][A-Z_]+$/);
    // A failed lane's QA automation is stopped; a complete one's cross-check completed it.
    const qaState = (lane: string) => field(laneward(['qa', 'status', '--lane', `c${serial}.${lane}`, '--state', c.state]).stdout, 'state');
    for (const line of failed) expect(qaState(field(line, 'lane')!)).toBe('stopped');
    for (const line of complete) expect(qaState(field(line, 'lane')!)).toBe('complete');
    expect(failed.map((l) => field(l, 'code')).sort()).toEqual(['CHILD_FAILED', 'CHILD_FAILED', 'LEASE_EXPIRED', 'QA_CROSS_CHECK_FAILED', 'RESULT_FINDINGS_MISSING'].sort());
    for (const line of complete) {
      const validated = laneward(['artifact', 'validate', field(line, 'run')!]);
      expect(validated.code).toBe(0);
    }
    const summary = lines(result.stdout, 'CREW_SUMMARY: ');
    expect(summary).toHaveLength(1);
    expect(summary[0]).toMatch(/^CREW_SUMMARY: lanes=10 complete=5 failed=5 interrupted=0 attempts=\d+ duration_s=\d+\.\d$/);
    const json = JSON.parse(readFileSync(report, 'utf8'));
    expect(json.summary).toMatchObject({ lanes: 10, complete: 5, failed: 5, interrupted: 0 });
    expect(json.lanes).toHaveLength(10);
  });

  it('should fail a lane whose agent writes a turn result that is not UTF-8 (AGENT_RESULT_INVALID), like a reviewer\'s', () => {
    const c = crew(1, 0, (value) => {
      value.runners.agent = value.runners.agent.map((a: string) => (a === 'healthy' ? 'latin1' : a));
    });
    const result = laneward(['crew', 'run', c.file, '--state', c.state], { cwd: c.dir });
    expect(lines(result.stdout, 'CREW_LANE: ')[0]).toMatch(/^CREW_LANE: lane=lane-1 status=failed code=AGENT_RESULT_INVALID .* detail=turn 1: the turn result is not UTF-8 text \(line 1\); retry: laneward crew run /);
    expect(result.code).toBe(1);
  });

  it('should retry a failed lane as the CREW_LANE line advises, as new attempts, leaving complete lanes untouched', () => {
    const c = crew(3, 0, (value) => {
      value.lanes[1].runners = { native: value.runners.native.map((a: string) => (a === 'healthy' ? 'crash' : a)) };
    });
    const first = laneward(['crew', 'run', c.file, '--state', c.state], { cwd: c.dir });
    expect(first.code).toBe(1);
    const failed = lines(first.stdout, 'CREW_LANE: lane=lane-2 ')[0]!;
    expect(failed).toMatch(/ status=failed code=CHILD_FAILED /);
    // The failed call's last stderr line ends the detail, after the advice.
    expect(failed).toMatch(/; stderr: reviewer\.mjs: crashed on purpose$/);
    const advice = / detail=.*; retry: (laneward crew run .*?); stderr: [^;]*$/.exec(failed)?.[1];
    expect(advice).toBe(`laneward crew run ${c.file} --retry-failed --state ${c.state}`);
    // Without the retry a failed lane stays failed.
    const again = laneward(['crew', 'run', c.file, '--state', c.state], { cwd: c.dir });
    expect(lines(again.stdout, 'CREW_SUMMARY: ')[0]).toMatch(/ complete=2 failed=1 .* attempts=0 /);
    const value = JSON.parse(readFileSync(c.file, 'utf8'));
    delete value.lanes[1].runners;
    writeFileSync(c.file, JSON.stringify(value));
    const retried = laneward(advice!.split(' ').slice(1), { cwd: c.dir });
    expect(retried.code).toBe(0);
    const ends = lines(retried.stdout, 'CREW_LANE: ');
    expect(ends.map((l) => field(l, 'status'))).toEqual(['complete', 'complete', 'complete']);
    // The complete lanes were not run again: their lines are as before.
    for (const lane of ['lane-1', 'lane-3']) expect(lines(retried.stdout, `CREW_LANE: lane=${lane} `)).toEqual(lines(first.stdout, `CREW_LANE: lane=${lane} `));
    expect(laneward(['artifact', 'validate', field(ends[1]!, 'run')!]).code).toBe(0);
  });

  it('should keep lanes of two crews that share lane ids and a state root apart', () => {
    const failing = crew(1, 0, (value) => {
      value.runners.observer = value.runners.observer.map((a: string) => a.replace('pass.mjs', 'fail.mjs'));
    });
    const healthy = crew(1, 0);
    const state = join(root, 'shared-state');
    const first = laneward(['crew', 'run', failing.file, '--state', state], { cwd: failing.dir });
    expect(lines(first.stdout, 'CREW_LANE: ')[0]).toMatch(/^CREW_LANE: lane=lane-1 status=failed code=QA_CROSS_CHECK_FAILED /);
    const second = laneward(['crew', 'run', healthy.file, '--state', state], { cwd: healthy.dir });
    expect(lines(second.stdout, 'CREW_LANE: ')[0]).toMatch(/^CREW_LANE: lane=lane-1 status=complete /);
    expect(second.code).toBe(0);
  });

  it('should serve the live view on loopback while the crew runs (CREW_VIEW: url)', async () => {
    const c = crew(2, 0);
    const child = spawn(process.execPath, [BUNDLE, 'crew', 'run', c.file, '--state', c.state, '--serve', '0'], { cwd: c.dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    const url = await new Promise<string>((resolve, reject) => {
      child.stderr.on('data', (chunk) => {
        stderr += chunk;
        const found = /^CREW_VIEW: (http:\/\/127\.0\.0\.1:\d+\/)\?token=[A-Za-z0-9_-]{43}$/m.exec(stderr);
        if (found !== null) resolve(found[1]!);
      });
      child.once('exit', () => reject(new Error(`exited before CREW_VIEW: ${stderr}`)));
    });
    const snapshot = (await (await fetch(`${url}snapshot.json`)).json()) as { crew: string; lanes: { id: string }[] };
    expect(snapshot.crew).toBe(`c${serial}`);
    expect(snapshot.lanes.map((l) => l.id)).toEqual(['lane-1', 'lane-2']);
    const page = await (await fetch(url)).text();
    expect(page).toContain('<svg');
    const code = await exitOf(child).then(({ code }) => code);
    expect(code).toBe(0);
    expect(lines(stdout, 'CREW_SUMMARY: ')[0]).toMatch(/ complete=2 /);
    // The view closes with the crew.
    await expect(fetch(`${url}snapshot.json`)).rejects.toThrow();
  });

  it('should refuse a second crew run of a crew that is running (CREW_BUSY, exit 3) and take over once it ended', async () => {
    const c = crew(2, 0);
    const env = { ...process.env, LANEWARD_FIXTURE_DELAY_MS: '100', LANEWARD_FIXTURE_LOG: c.log };
    const first = spawn(process.execPath, [BUNDLE, 'crew', 'run', c.file, '--state', c.state], { cwd: c.dir, env, stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    first.stdout.on('data', (chunk) => (out += chunk));
    const exited = exitOf(first).then(({ code }) => code);
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (existsSync(c.log)) {
          clearInterval(poll);
          resolve();
        }
      }, 20);
    });
    const second = laneward(['crew', 'run', c.file, '--state', c.state], { cwd: c.dir });
    expect(second.code).toBe(3);
    expect(second.stderr).toMatch(/crew c\d+ is being run by process \d+ since .*\(CREW_BUSY\)$/m);
    expect(second.stdout).toBe('');
    expect(await exited).toBe(0);
    expect(lines(out, 'CREW_SUMMARY: ')[0]).toMatch(/ complete=2 failed=0 /);
    const third = laneward(['crew', 'run', c.file, '--state', c.state], { cwd: c.dir });
    expect(third.code).toBe(0);
    expect(lines(third.stdout, 'CREW_SUMMARY: ')[0]).toMatch(/ complete=2 .* attempts=0 /);
  });

  it('should refuse a second crew in the same out while the first runs (CREW_BUSY, exit 3, nothing started), and let the first complete', async () => {
    // Two crew files in one directory: both keep the default out, runs/, and share lane ids.
    const a = crew(2, 0);
    const other = JSON.parse(readFileSync(a.file, 'utf8'));
    other.crew = `${other.crew}-b`;
    const bFile = join(a.dir, 'crew-b.json');
    writeFileSync(bFile, JSON.stringify(other));
    const env = { ...process.env, LANEWARD_FIXTURE_DELAY_MS: '100', LANEWARD_FIXTURE_LOG: a.log };
    const first = spawn(process.execPath, [BUNDLE, 'crew', 'run', a.file, '--state', a.state], { cwd: a.dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    first.stdout.on('data', (chunk) => (out += chunk));
    first.stderr.on('data', (chunk) => (err += chunk));
    const exited = exitOf(first).then(({ code }) => code);
    try {
      await until(() => existsSync(a.log), 30_000, 'the first crew to start a child');
    } catch (error) {
      first.kill('SIGKILL');
      throw error;
    }
    // Run on the same state root and on another: the out is what they share.
    for (const state of [a.state, join(a.dir, 'state-b')]) {
      const second = laneward(['crew', 'run', bFile, '--state', state], { cwd: a.dir });
      if (second.code !== 3) first.kill('SIGKILL');
      expect(second.code).toBe(3);
      expect(second.stderr).toMatch(new RegExp(`\\(out .*/runs is in use by crew c${serial} \\(.*/crew\\.json\\), process ${first.pid} since .*\\(CREW_BUSY\\)$`, 'm'));
      expect(second.stdout).toBe('');
    }
    expect(await exited).toBe(0);
    expect(err).toBe('');
    expect(lines(out, 'CREW_LANE: ').map((l) => field(l, 'status'))).toEqual(['complete', 'complete']);
    // Its claim ends with it.
    expect(existsSync(join(a.dir, 'runs', '.laneward-crew'))).toBe(false);
  });

  it('should take over the out claim of a crew whose process died', () => {
    const c = crew(1, 0);
    mkdirSync(join(c.dir, 'runs'), { recursive: true });
    // A claim left by a process that is gone (a pid above the kernel's limit) and one whose pid was reused (other start ticks).
    for (const holder of [{ pid: 2 ** 22 + 1, ticks: '1' }, { pid: process.pid, ticks: '1' }]) {
      writeFileSync(join(c.dir, 'runs', '.laneward-crew'), JSON.stringify({ crew: 'gone', file: '/x/crew.json', since: 'then', token: 't', ...holder }));
      const result = laneward(['crew', 'run', c.file, '--state', c.state], { cwd: c.dir });
      expect(result.code).toBe(0);
      expect(existsSync(join(c.dir, 'runs', '.laneward-crew'))).toBe(false);
    }
  });

  it('should print one JSON object per lane and a summary object with --json', () => {
    const c = crew(2, 0);
    const result = laneward(['crew', 'run', c.file, '--state', c.state, '--json'], { cwd: c.dir });
    expect(result.code).toBe(0);
    const objects = result.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(objects).toHaveLength(3);
    expect(objects.slice(0, 2).map((o) => o.status)).toEqual(['complete', 'complete']);
    expect(objects[2].summary).toMatchObject({ lanes: 2, complete: 2, failed: 0, interrupted: 0, stopped_by: null });
  });

  it('should refuse a bad crew file with CREW_INVALID (exit 2) and a tampered descriptor with DESCRIPTOR_INVALID (exit 3), starting nothing', async () => {
    const c = crew(2, 0, (value) => {
      value.limits.concurrency = 0;
    });
    const bad = laneward(['crew', 'run', c.file, '--state', c.state]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/limits\.concurrency.*\(CREW_INVALID\)$/m);
    const d = crew(2, 0);
    writeFileSync(join(d.dir, 'actions.json'), readFileSync(join(d.dir, 'actions.json'), 'utf8').replace('2000', '2001'));
    const tampered = laneward(['crew', 'run', d.file, '--state', d.state]);
    expect(tampered.code).toBe(3);
    expect(tampered.stderr).toMatch(/\(DESCRIPTOR_INVALID\)$/m);
    expect(existsSync(join(d.dir, 'runs'))).toBe(false);
    expect(laneward(['crew', 'run']).code).toBe(2);
    // A view port already taken is a usage error, after which nothing is left running.
    const taken = await new Promise<import('node:net').Server>((resolve) => {
      const server = createServer();
      server.listen(0, '127.0.0.1', () => resolve(server));
    });
    const port = (taken.address() as import('node:net').AddressInfo).port;
    const e = crew(1, 0);
    for (const report of [e.dir, join(e.dir, 'no-such-dir', 'r.json')]) {
      const refused = laneward(['crew', 'run', e.file, '--state', e.state, '--report', report], { cwd: e.dir });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/--report .*\(USAGE\)$/m);
    }
    expect(existsSync(join(e.dir, 'runs'))).toBe(false);
    const busy = laneward(['crew', 'run', e.file, '--state', e.state, '--serve', String(port)], { cwd: e.dir });
    taken.close();
    // A child ended by a signal says which: a crash there is a defect of its own.
    expect(busy.code, `signal=${busy.signal} stderr=${busy.stderr}`).toBe(2);
    expect(busy.stderr).toMatch(new RegExp(`--serve ${port}: .*EADDRINUSE.*\\(USAGE\\)$`, 'm'));
  });

  it.each([
    ['an answer outside the gate grammar', (v: Record<string, any>) => void (v.answer = 'yes please'), /answer: "yes please" is not a gate reply/],
    ['an answer with a stray word after as-is', (v: Record<string, any>) => void (v.answer = 'as-is d1b'), /answer: "as-is d1b" is not a gate reply/],
    ['a runner not on PATH', (v: Record<string, any>) => void (v.runners.observer = ['laneward-no-such-observer', '{prompt}']), /lane lane-1: runners\.observer: program "laneward-no-such-observer" is not found on PATH/],
    ['a lane override with a missing path', (v: Record<string, any>) => void (v.lanes[2].runners = { agent: ['./no-such-agent.sh'] }), /lane lane-3: runners\.agent: program "\.\/no-such-agent\.sh" .*no-such-agent\.sh does not exist/],
    ['a runner that is not executable', (v: Record<string, any>) => void (v.runners.native = [join(ROOT, 'package.json')]), /lane lane-1: runners\.native: program ".*package\.json" .* is not executable/],
    ['a runner that is a directory', (v: Record<string, any>) => void (v.runners.outside = [ROOT]), /lane lane-1: runners\.outside: .* is not a regular file/],
  ])('should refuse %s as CREW_INVALID (exit 2) naming its field (and lane), before anything starts', (_name, edit, message) => {
    const c = crew(3, 0, edit);
    const result = laneward(['crew', 'run', c.file, '--state', c.state], { cwd: c.dir });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toMatch(/\(CREW_INVALID\)\n$/);
    expect(existsSync(join(c.dir, 'runs'))).toBe(false);
    expect(existsSync(c.state)).toBe(false);
  });

  it('should run a crew whose runners are found on PATH and by a path relative to its working directory', () => {
    const c = crew(1, 0, (value) => {
      value.runners.native = ['node', ...value.runners.native.slice(1)];
      value.runners.agent = [`./${'node'}`, ...value.runners.agent.slice(1)];
    });
    symlinkSync(process.execPath, join(c.dir, 'node'));
    const result = laneward(['crew', 'run', c.file, '--state', c.state], { cwd: c.dir });
    expect(lines(result.stdout, 'CREW_SUMMARY: ')[0]).toMatch(/ complete=1 /);
    expect(result.code).toBe(0);
  });

  it('should stop at --deadline with every unfinished lane interrupted, exit 124 and no child left, and resume them all', () => {
    const c = crew(3, 0, (value) => {
      // Reviewers that keep marking progress for a long time: only the deadline stops them.
      value.runners.native = value.runners.native.map((a: string) => (a === '2' ? '100000' : a === '5' ? '50' : a));
    });
    const result = laneward(['crew', 'run', c.file, '--state', c.state, '--deadline', '0.05'], { cwd: c.dir });
    expect(result.code).toBe(124);
    expect(lines(result.stdout, 'CREW_SUMMARY: ')[0]).toMatch(/ complete=0 failed=0 interrupted=3 /);
    // Started again (with reviewers that finish), every lane resumes where it stopped: the
    // native voices the deadline cancelled are minted anew, as new attempts.
    const value = JSON.parse(readFileSync(c.file, 'utf8'));
    value.runners.native = value.runners.outside;
    writeFileSync(c.file, JSON.stringify(value));
    const resumed = laneward(['crew', 'run', c.file, '--state', c.state], { cwd: c.dir });
    expect(lines(resumed.stdout, 'CREW_SUMMARY: ')[0]).toMatch(/ lanes=3 complete=3 failed=0 interrupted=0 /);
    expect(resumed.code).toBe(0);
  });

  it('should start no lane after --deadline: no run directory and no line for a lane that waited its turn', () => {
    const c = crew(12, 0, (value) => {
      value.runners.native = value.runners.native.map((a: string) => (a === '2' ? '100000' : a === '5' ? '50' : a));
      value.limits.lanes = 2;
    });
    // Lanes 1 and 2 never finish, so no other lane can start before the deadline, however
    // long it is: 5 s is for a loaded machine to start the two (600 ms once started none).
    const result = laneward(['crew', 'run', c.file, '--state', c.state, '--deadline', '5s'], { cwd: c.dir });
    expect(result.code).toBe(124);
    const ends = lines(result.stdout, 'CREW_LANE: ');
    // The two lanes that had started end in the order their children stopped.
    expect(ends.map((l) => field(l, 'lane')).sort()).toEqual(['lane-01', 'lane-02']);
    for (const end of ends) expect(field(end, 'status')).toBe('interrupted');
    expect(readdirSync(join(c.dir, 'runs')).sort()).toEqual(['lane-01', 'lane-02']);
    expect(lines(result.stdout, 'CREW_SUMMARY: ')[0]).toMatch(/ lanes=12 complete=0 failed=0 interrupted=12 /);
  });

  it.each([['90x'], ['5 m'], ['-1'], ['0'], ['0s'], ['m'], ['1e3'], ['25d'], ['100000h']])('should refuse --deadline %j as USAGE naming the flag, starting nothing', (deadline) => {
    const c = crew(1, 0);
    const result = laneward(['crew', 'run', c.file, '--state', c.state, `--deadline=${deadline}`], { cwd: c.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--deadline .*\(USAGE\)$/m);
    expect(existsSync(join(c.dir, 'runs'))).toBe(false);
  });

  it('should take --deadline with a unit (500ms)', () => {
    const c = crew(2, 0, (value) => {
      value.runners.native = value.runners.native.map((a: string) => (a === '2' ? '100000' : a === '5' ? '50' : a));
    });
    const result = laneward(['crew', 'run', c.file, '--state', c.state, '--deadline', '500ms'], { cwd: c.dir });
    expect(result.code).toBe(124);
    expect(lines(result.stdout, 'CREW_SUMMARY: ')[0]).toMatch(/ lanes=2 complete=0 failed=0 interrupted=2 /);
  });

  it('should resume every lane of a crew killed mid-run with no attempt started twice', async () => {
    const c = crew(6, 0);
    // The tag marks every process of this crew (its children inherit it), to wait for them.
    const tag = `LANEWARD_CREW_CLI_RESUME=${process.pid}-${Date.now()}`;
    const env = { ...process.env, REVIEWER_LOG: c.log, LANEWARD_FIXTURE_LOG: c.log, OBSERVER_LOG: c.log, [tag.split('=')[0]!]: tag.split('=')[1]! };
    const child = spawn(process.execPath, [BUNDLE, 'crew', 'run', c.file, '--state', c.state], { cwd: c.dir, env, stdio: 'ignore' });
    // Killed once a dozen children have started: lanes are mid-review and mid-work.
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        const started = existsSync(c.log) ? lines(readFileSync(c.log, 'utf8'), 'start ').length : 0;
        if (started >= 12) {
          clearInterval(poll);
          child.kill('SIGKILL');
          resolve();
        }
      }, 20);
    });
    await exitOf(child).then(({ code }) => code);
    // Children of the killed coordinator finish on their own (instant fixtures): wait
    // until none of them runs any more.
    expect(await settleTagged(tag, 20_000)).toEqual([]);
    const again = laneward(['crew', 'run', c.file, '--state', c.state], { cwd: c.dir, env });
    expect(again.stderr).toBe('');
    // An attempt journaled as dispatched whose child may or may not have started when the
    // coordinator died is never started again: its voice ends EXECUTION_UNKNOWN, typed.
    const ends = lines(again.stdout, 'CREW_LANE: ');
    expect(ends).toHaveLength(6);
    for (const end of ends) expect(end).toMatch(/ status=complete | status=failed code=EXECUTION_UNKNOWN /);
    for (const end of ends.filter((l) => l.includes('status=complete'))) expect(laneward(['artifact', 'validate', field(end, 'run')!]).code).toBe(0);
    const complete = ends.filter((l) => l.includes('status=complete')).length;
    expect(again.code).toBe(complete === 6 ? 0 : 1);
    expect(lines(again.stdout, 'CREW_SUMMARY: ')[0]).toContain(` lanes=6 complete=${complete} failed=${6 - complete} interrupted=0 `);
    // Started a third time, nothing is left to run.
    const third = laneward(['crew', 'run', c.file, '--state', c.state], { cwd: c.dir, env });
    expect(lines(third.stdout, 'CREW_SUMMARY: ')[0]).toMatch(/ attempts=0 /);
    const starts = lines(readFileSync(c.log, 'utf8'), 'start ').map((l) => l.split(' ').slice(2).join(' '));
    const twice = starts.filter((prompt, i) => starts.indexOf(prompt) !== i);
    expect(twice).toEqual([]);
  });
});

describe('laneward crew run: an agent turn the coordinator lost', () => {
  it('should ingest, on the next run, the turn whose orphan finished after a SIGKILL, so QA sees it', async () => {
    const c = crew(1, 0);
    const env = { ...process.env, LANEWARD_FIXTURE_DELAY_MS: '300', LANEWARD_FIXTURE_LOG: c.log };
    const child = spawn(process.execPath, [BUNDLE, 'crew', 'run', c.file, '--state', c.state], { cwd: c.dir, env, stdio: 'ignore' });
    const exited = exitOf(child).then(({ code }) => code);
    const turnOne = join(c.dir, 'runs', 'lane-1', 'agent', 'turn-1');
    // Killed while the agent's first turn runs: its orphan goes on, changes files and says so.
    await until(() => existsSync(c.log) && readFileSync(c.log, 'utf8').includes(`${turnOne}.prompt.md`), 60_000, 'agent turn 1 to start').catch((error) => {
      child.kill('SIGKILL');
      throw error;
    });
    child.kill('SIGKILL');
    await exited;
    await until(() => existsSync(`${turnOne}.json`), 10_000, 'the orphan to write its result');
    expect(JSON.parse(readFileSync(`${turnOne}.json`, 'utf8'))).toMatchObject({ diff: true, finish: false });
    const again = laneward(['crew', 'run', c.file, '--state', c.state, '--json'], { cwd: c.dir });
    expect(again.code).toBe(0);
    const [lane] = again.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(lane).toMatchObject({ lane: 'lane-1', status: 'complete', turns: 3, lost_turns: [] });
    // Three agent turns, each a user and an assistant turn with QA: turn 1 among them.
    const status = JSON.parse(laneward(['qa', 'status', '--lane', `c${serial}.lane-1`, '--state', c.state, '--json']).stdout).status;
    expect(status).toMatchObject({ state: 'complete', turns: 6, unreviewedDiffs: [] });
    // Never started twice.
    expect(lines(readFileSync(c.log, 'utf8'), 'start ').filter((l) => l.endsWith(`${turnOne}.prompt.md`))).toHaveLength(1);
  });
});

describe('laneward demo crew', () => {
  it('should write a fresh crew, run it and say the planted failures are as expected', () => {
    const dir = join(root, 'demo');
    const result = laneward(['demo', 'crew', '--lanes', '3', '--broken', '1', '--dir', dir, '--state', join(dir, 'state')], { cwd: root });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^DEMO: 2 complete, 1 failed, 1 broken on purpose: as expected \(report .*report\.json\)$/m);
    expect(lines(result.stdout, 'CREW_SUMMARY: ')[0]).toMatch(/^CREW_SUMMARY: lanes=3 complete=2 failed=1 interrupted=0 /);
    expect(lines(result.stdout, 'CREW_LANE: lane=lane-3 ')[0]).toMatch(/ status=failed code=LEASE_EXPIRED /);
  });
});
