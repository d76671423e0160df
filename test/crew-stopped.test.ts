import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { CrewSnapshot } from '../formats/console/snapshot.ts';
import { writeDemoCrew } from '../main/demo/demo-crew.ts';
import { BUNDLE, ensureBuilt, laneward, ROOT } from './helpers/cli.ts';
import { allPids, canRun, exitOf, killQuietly, procStat, until } from './helpers/procs.ts';
import { served } from './helpers/served.ts';
import { httpRequest } from './helpers/sse.ts';
import { tempRoot } from './helpers/tmp.ts';

// A crew that no process runs any more tells the truth: killed, it is stopped (never
// live, its clock standing, no lane stuck); interrupted, it names its unfinished lanes;
// either way with the command that continues it, which does.

const root = tempRoot('crew-stopped');
const fixtures = join(ROOT, 'fixtures');
let serial = 0;

beforeAll(() => ensureBuilt());

/** Children left running by a killed crew, found by this test's temp root in their command line. */
function strays(): number[] {
  return allPids().filter((pid) => {
    if (!canRun(pid) || pid === process.pid) return false;
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes(root);
    } catch {
      return false;
    }
  });
}

afterEach(() => {
  const left = strays();
  for (const pid of left) killQuietly(-(procStat(pid)?.pgid ?? pid));
  for (const pid of left) killQuietly(pid);
  expect(left).toEqual([]);
});

/** Two lanes whose reviewers take 20 x 200 ms, logging their starts. */
function slowCrew() {
  const dir = join(root, `crew-${++serial}`);
  const file = writeDemoCrew({ dir, crew: `s${serial}`, lanes: 2, broken: 0, concurrency: 4, fixtures });
  const value = JSON.parse(readFileSync(file, 'utf8'));
  const slow = (argv: string[]) => argv.map((a) => (a === '2' ? '20' : a === '5' ? '200' : a));
  value.runners.native = slow(value.runners.native);
  value.runners.outside = slow(value.runners.outside);
  value.limits.timeout_ms = 60_000;
  writeFileSync(file, JSON.stringify(value));
  const reviewers = join(dir, 'reviewers.log');
  const state = join(dir, 'state');
  return { dir, file, state, env: { ...process.env, REVIEWER_LOG: reviewers }, reviewers };
}

type Crew = ReturnType<typeof slowCrew>;

const reviewerStarts = (c: Crew) => (existsSync(c.reviewers) ? readFileSync(c.reviewers, 'utf8').split('\n').filter((l) => l.startsWith('start ')).length : 0);

/** Starts the crew, waits until its four reviewers run, then sends it `signal`; its stdout and exit. */
async function stopMidReview(c: Crew, signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string }> {
  const crew = spawn(process.execPath, [BUNDLE, 'crew', 'run', c.file, '--state', c.state], { cwd: c.dir, env: c.env, stdio: ['ignore', 'pipe', 'ignore'] });
  let stdout = '';
  crew.stdout.on('data', (chunk) => (stdout += chunk));
  const exited = exitOf(crew);
  try {
    await until(() => reviewerStarts(c) >= 4, 60_000, 'four reviewers to start');
  } finally {
    crew.kill(signal);
  }
  return { ...(await exited), stdout };
}

const status = (c: Crew, ...more: string[]) => laneward(['crew', 'status', c.file, '--state', c.state, ...more], { cwd: c.dir, env: c.env });
const resumeOf = (c: Crew) => `laneward crew run ${c.file} --state ${c.state}`;

/** Runs the printed resume command as printed (its words hold no space here). */
function resume(c: Crew, command: string) {
  const [program, ...args] = command.split(' ');
  expect(program).toBe('laneward');
  return laneward(args, { cwd: c.dir, env: c.env, timeoutMs: 120_000 });
}

describe('crew status and crew view of a crew whose process was SIGKILLed', () => {
  test('should show it stopped, its clock standing, its in-flight lanes interrupted (never stuck), with the command that continues it', async () => {
    const c = slowCrew();
    const killed = await stopMidReview(c, 'SIGKILL');
    expect(killed.signal).toBe('SIGKILL');

    // Quiet for longer than 1 ms is all a stuck lane is: a running crew's lanes would be.
    const first = status(c, '--stuck-after', '1ms');
    expect(first.code).toBe(0);
    const lines = first.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^CREW_STATUS: crew=s\d+ run=stopped lanes=2 queued=0 bootstrap=0 review=2 answer=0 work=0 pregate=0 cross-check=0 export=0 complete=0 failed=0 interrupted=0 lanes_per_min=- eta_s=- /);
    // The two lanes come quietest first: which saved last is the race's to say.
    expect(lines.slice(1, 3).sort()).toEqual(['CREW_NEEDS: lane=lane-1 need=interrupted state=review code=-', 'CREW_NEEDS: lane=lane-2 need=interrupted state=review code=-']);
    expect(lines.slice(3)).toEqual([`CREW_RESUME: ${resumeOf(c)}`]);

    // Its clock stands where it stopped: two reads apart in time show the same moment.
    const a = JSON.parse(status(c, '--json').stdout) as CrewSnapshot;
    await until(() => Date.now() > Date.parse(a.now) + 50, 5_000, 'the clock to move on');
    const b = JSON.parse(status(c, '--json').stdout) as CrewSnapshot;
    expect([a.run, a.done, a.now, a.elapsedS, a.etaS]).toEqual(['stopped', false, b.now, b.elapsedS, null]);
    expect(a.resumeCommand).toBe(resumeOf(c));

    // Each lane's story says how to continue it.
    expect(status(c, '--lane', 'lane-1').stdout.trim().split('\n').at(-1)).toBe(`LANE_RESUME: ${resumeOf(c)}`);

    // The page says so, with the command, and calls no lane stuck.
    const view = served(['crew', 'view', c.file, '--state', c.state, '--serve', '0', '--stuck-after', '1ms'], c.dir);
    try {
      const body = (await httpRequest(await view.url)).body;
      // The page as rendered, without the script that renders it again.
      const page = body.slice(body.indexOf('<main'), body.indexOf('</main>'));
      expect(page).toContain('data-run="stopped"');
      expect(page).toContain(`<code id="resume">${resumeOf(c)}</code>`);
      expect(page).toContain('<h2>Needs you: 0 failed, 0 stuck, 2 interrupted</h2>');
      expect(page).not.toMatch(/class="cell [^"]* stuck"/);
    } finally {
      view.child.kill('SIGTERM');
      await view.exited;
    }

    // The command does what it says: every lane completes.
    const again = resume(c, lines.at(-1)!.slice('CREW_RESUME: '.length));
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^CREW_SUMMARY: lanes=2 complete=2 failed=0 interrupted=0 /m);
    expect(status(c).stdout).toMatch(/^CREW_STATUS: crew=s\d+ run=done lanes=2 .* complete=2 /);
    expect(status(c).stdout).not.toContain('CREW_RESUME');
  });
});

describe('crew status of a crew interrupted by a signal', () => {
  test('should show it interrupted, naming each unfinished lane, with the command that continues it (its lines say it too)', async () => {
    const c = slowCrew();
    const stopped = await stopMidReview(c, 'SIGTERM');
    expect(stopped.code).toBe(143);
    const ended = stopped.stdout.split('\n').filter((l) => l.startsWith('CREW_LANE: '));
    expect(ended).toHaveLength(2);
    for (const line of ended) expect(line).toMatch(new RegExp(`^CREW_LANE: lane=lane-\\d status=interrupted code=CANCELLED .*; resume: ${resumeOf(c).replaceAll('.', '\\.')}$`));

    const lines = status(c).stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^CREW_STATUS: crew=s\d+ run=interrupted lanes=2 .* interrupted=2 lanes_per_min=\S+ eta_s=- /);
    expect(lines.slice(1, 3).map((l) => l.replace(/ detail=.*$/, '')).sort()).toEqual([
      'CREW_NEEDS: lane=lane-1 need=interrupted state=interrupted code=CANCELLED',
      'CREW_NEEDS: lane=lane-2 need=interrupted state=interrupted code=CANCELLED',
    ]);
    expect(lines.slice(3)).toEqual([`CREW_RESUME: ${resumeOf(c)}`]);
    const snapshot = JSON.parse(status(c, '--json').stdout) as CrewSnapshot;
    expect([snapshot.run, snapshot.done]).toEqual(['interrupted', true]);
    expect(status(c, '--lane', 'lane-2').stdout.trim().split('\n').at(-1)).toBe(`LANE_RESUME: ${resumeOf(c)}`);

    const again = resume(c, lines.at(-1)!.slice('CREW_RESUME: '.length));
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^CREW_SUMMARY: lanes=2 complete=2 failed=0 interrupted=0 /m);
    expect(status(c).stdout).toMatch(/^CREW_STATUS: crew=s\d+ run=done /);
  });
});
