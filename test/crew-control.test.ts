import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeDemoCrew } from '../main/demo/demo-crew.ts';
import { BUNDLE, ensureBuilt, laneward, ROOT } from './helpers/cli.ts';
import { canRun, exitOf, killQuietly, killStrays, until } from './helpers/procs.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('crew-control');
const fixtures = join(ROOT, 'fixtures');

beforeAll(() => ensureBuilt());
afterAll(() => {
  expect(killStrays(root)).toEqual([]);
});

const lines = (text: string, prefix: string) => text.split('\n').filter((l) => l.startsWith(prefix));
const field = (line: string | undefined, name: string) => (line === undefined ? undefined : new RegExp(`(?:^| )${name}=(\\S+)`).exec(line)?.[1]);

/**
 * One crew of four lanes whose agents stall (no marks, never end) on their first turns:
 * lane-1 and lane-2 on turn 1, lane-3 on turns 1 and 2; healthy afterwards. lane-4's
 * outside reviewer stalls the first time it runs. The lease is two minutes, so nothing
 * but an operator ends a stalled call within the test.
 */
function stuckCrew() {
  const dir = join(root, 'crew');
  const file = writeDemoCrew({ dir, crew: 'ctl', lanes: 4, broken: 0, concurrency: 6, fixtures });
  const value = JSON.parse(readFileSync(file, 'utf8'));
  value.limits.timeout_ms = 120_000;
  const agent = (mode: string) => [process.execPath, join(fixtures, 'agents', 'agent.mjs'), '{prompt}', '{result}', mode, '3'];
  value.lanes[0].runners = { agent: agent('stall-through-1') };
  value.lanes[1].runners = { agent: agent('stall-through-1') };
  value.lanes[2].runners = { agent: agent('stall-through-2') };
  value.lanes[3].runners = { outside: [process.execPath, join(fixtures, 'reviewers', 'reviewer.mjs'), '--variant', 'stall-once', '--steps', '2', '--delay-ms', '5', '{prompt}', '{result}'] };
  writeFileSync(file, JSON.stringify(value));
  const log = join(dir, 'agents.log');
  const reviewers = join(dir, 'reviewers.log');
  return { dir, file, state: join(dir, 'state'), log, reviewers, env: { LANEWARD_FIXTURE_LOG: log, REVIEWER_LOG: reviewers } };
}

/** How often a reviewer was started on `prompt` (the fixture logs `start <pid> <prompt>`). */
function reviewerStarts(c: { reviewers: string }, prompt: string): number {
  if (!existsSync(c.reviewers)) return 0;
  return readFileSync(c.reviewers, 'utf8').split('\n').filter((l) => l.startsWith('start ') && l.endsWith(` ${prompt}`)).length;
}

type Crew = ReturnType<typeof stuckCrew>;

/** The agents started, as the fixture logs them: `start <pid> <prompt file>`. */
function agentStarts(c: Crew): { pid: number; prompt: string }[] {
  if (!existsSync(c.log)) return [];
  return readFileSync(c.log, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('start '))
    .map((l) => {
      const [, pid, prompt] = l.split(' ');
      return { pid: Number(pid), prompt: prompt! };
    });
}

const turnPrompt = (c: Crew, lane: string, turn: number) => join(c.dir, 'runs', lane, 'agent', `turn-${turn}.prompt.md`);
const agentOf = (c: Crew, lane: string, turn: number) => agentStarts(c).find((s) => s.prompt === turnPrompt(c, lane, turn));

/** A crew run in the background, its stdout kept. */
function startCrew(c: Crew, extra: readonly string[] = []): { child: ChildProcess; stdout: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [BUNDLE, 'crew', 'run', c.file, '--state', c.state, ...extra], { cwd: c.dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...c.env } });
  let out = '';
  child.stdout!.on('data', (chunk) => (out += chunk));
  child.stderr!.resume();
  const exited = exitOf(child).then(({ code, signal }) => code ?? (signal === null ? null : -1));
  return { child, stdout: () => out, exited };
}

/** `laneward crew <args> CREW.json --state DIR --by alice`, one line out. */
function ask(c: Crew, args: readonly string[]) {
  const [sub, ...rest] = args;
  const run = laneward(['crew', sub!, c.file, ...rest, '--state', c.state, '--by', 'alice'], { cwd: c.dir });
  const line = lines(run.stdout, 'CREW_REQUEST: ')[0];
  return { code: run.code, line, status: field(line, 'status'), refused: field(line, 'code'), seq: field(line, 'seq'), stderr: run.stderr };
}

/**
 * `ask` of a crew frozen by SIGSTOP. A freeze that lands inside one of its commits keeps
 * the store's write lock held (a stopped writer is still alive), and every other writer
 * waits for it, this request too: such a try is killed before it wrote anything, the crew
 * let run a moment, frozen again, and the request tried again.
 */
async function askFrozen(c: Crew, crew: ChildProcess, args: readonly string[]) {
  for (let tries = 1; ; tries++) {
    const [sub, ...rest] = args;
    const run = laneward(['crew', sub!, c.file, ...rest, '--state', c.state, '--by', 'alice'], { cwd: c.dir, timeoutMs: 10_000 });
    if (run.code !== null || tries === 5) {
      const line = lines(run.stdout, 'CREW_REQUEST: ')[0];
      return { code: run.code, line, status: field(line, 'status'), refused: field(line, 'code'), seq: field(line, 'seq'), stderr: run.stderr };
    }
    crew.kill('SIGCONT');
    await new Promise((resolve) => setTimeout(resolve, 100)); // lets the crew end its commit; the freeze is checked by the request itself
    crew.kill('SIGSTOP');
  }
}

describe('crew retry|cancel|stop: an operator acts on a running crew through its store', () => {
  it('should cancel a stuck call (torn down, typed, never replayed), retry it to completion, cancel a lane, refuse typed what cannot apply, stop the crew, and take each request once across a kill', async () => {
    const c = stuckCrew();
    const first = startCrew(c, ['--report', join(c.dir, 'report.json')]);
    try {
      await until(() => ['lane-1', 'lane-2', 'lane-3'].every((lane) => agentOf(c, lane, 1) !== undefined), 90_000, 'every lane\'s first agent turn to start');

      // Refused before anything is recorded: a lane the crew file does not name, a retry of a running lane.
      expect(ask(c, ['retry', '--lane', 'nope'])).toMatchObject({ code: 3, status: 'refused', refused: 'LANE_UNKNOWN', seq: '-' });
      expect(ask(c, ['retry', '--lane', 'lane-1'])).toMatchObject({ code: 3, status: 'refused', refused: 'LANE_NOT_RETRYABLE' });

      // The stuck call of lane-1, cancelled from this shell: its agent is torn down, the lane ends CALL_CANCELLED.
      const stuck = agentOf(c, 'lane-1', 1)!;
      const cancel = ask(c, ['cancel', '--lane', 'lane-1', '--call', '--wait', '60s']);
      expect(cancel).toMatchObject({ code: 0, status: 'applied' });
      expect(cancel.line).toMatch(/^CREW_REQUEST: seq=\d+ action=cancel_call lane=lane-1 by=human:alice status=applied$/);
      await until(() => lines(first.stdout(), 'CREW_LANE: lane=lane-1 ').length === 1, 60_000, 'lane-1 to end');
      expect(lines(first.stdout(), 'CREW_CONTROL: ')).toEqual([`CREW_CONTROL: seq=${cancel.seq} action=cancel_call lane=lane-1 by=human:alice status=applied`]);
      const ended = lines(first.stdout(), 'CREW_LANE: lane=lane-1 ')[0];
      expect([field(ended, 'status'), field(ended, 'code')]).toEqual(['failed', 'CALL_CANCELLED']);
      expect(ended).toMatch(new RegExp(`detail=its running call was cancelled by human:alice \\(request ${cancel.seq}\\) in stage work`));
      expect(canRun(stuck.pid)).toBe(false);
      // Nothing left to cancel on it now.
      expect(ask(c, ['cancel', '--lane', 'lane-1', '--call'])).toMatchObject({ code: 3, status: 'refused', refused: 'CALL_NOT_RUNNING' });

      // Retried in the running crew: driven again at once, new turns, and it completes.
      expect(ask(c, ['retry', '--lane', 'lane-1', '--wait', '60s'])).toMatchObject({ code: 0, status: 'applied' });
      await until(() => lines(first.stdout(), 'CREW_LANE: lane=lane-1 ').length === 2, 90_000, 'lane-1 to end again');
      expect(field(lines(first.stdout(), 'CREW_LANE: lane=lane-1 ')[1], 'status')).toBe('complete');
      expect(ask(c, ['retry', '--lane', 'lane-1'])).toMatchObject({ code: 3, status: 'refused', refused: 'LANE_NOT_RETRYABLE' });

      // The whole lane-2 cancelled: its agent torn down, the lane ends LANE_CANCELLED, and cannot be cancelled again.
      const stuck2 = agentOf(c, 'lane-2', 1)!;
      expect(ask(c, ['cancel', '--lane', 'lane-2', '--wait', '60s'])).toMatchObject({ code: 0, status: 'applied' });
      await until(() => lines(first.stdout(), 'CREW_LANE: lane=lane-2 ').length === 1, 60_000, 'lane-2 to end');
      const cancelled = lines(first.stdout(), 'CREW_LANE: lane=lane-2 ')[0];
      expect([field(cancelled, 'status'), field(cancelled, 'code')]).toEqual(['failed', 'LANE_CANCELLED']);
      expect(canRun(stuck2.pid)).toBe(false);
      expect(ask(c, ['cancel', '--lane', 'lane-2'])).toMatchObject({ code: 3, status: 'refused', refused: 'LANE_NOT_RUNNING' });

      // A stuck reviewer's call cancelled mid-review: torn down, and its voice not minted anew within the run.
      const stalled = join(c.dir, 'runs', 'lane-4', 'ceo-outside-prompt.md');
      const marker = join(c.dir, 'runs', 'lane-4', 'reviewer.stalled');
      await until(() => existsSync(marker), 90_000, 'lane-4\'s outside reviewer to stall');
      const [reviewerPid, stalledOn] = readFileSync(marker, 'utf8').trim().split(' ');
      expect(stalledOn).toBe(stalled);
      const reviewer = Number(reviewerPid);
      expect(ask(c, ['cancel', '--lane', 'lane-4', '--call', '--wait', '60s'])).toMatchObject({ code: 0, status: 'applied' });
      await until(() => lines(first.stdout(), 'CREW_LANE: lane=lane-4 ').length === 1, 60_000, 'lane-4 to end');
      const review = lines(first.stdout(), 'CREW_LANE: lane=lane-4 ')[0];
      expect([field(review, 'status'), field(review, 'code')]).toEqual(['failed', 'CALL_CANCELLED']);
      expect(review).toMatch(/ detail=its running call was cancelled by human:alice \(request \d+\) in stage review: review run interrupted \(cancel\);/);
      expect(canRun(reviewer)).toBe(false);
      expect(reviewerStarts(c, stalled)).toBe(1);

      // Stopped by the operator, as a SIGTERM would: exit 143, lane-3 interrupted, its agent gone.
      const stuck3 = agentOf(c, 'lane-3', 1)!;
      expect(ask(c, ['stop', '--wait', '60s'])).toMatchObject({ code: 0, status: 'applied' });
      expect(await first.exited).toBe(143);
      expect(field(lines(first.stdout(), 'CREW_LANE: lane=lane-3 ')[0], 'status')).toBe('interrupted');
      expect(lines(first.stdout(), 'CREW_SUMMARY: ')[0]).toMatch(/^CREW_SUMMARY: lanes=4 complete=1 failed=2 interrupted=1 /);
      expect(canRun(stuck3.pid)).toBe(false);
    } finally {
      if (first.child.exitCode === null && first.child.signalCode === null) first.child.kill('SIGTERM');
      await first.exited;
    }
    expect(JSON.parse(readFileSync(join(c.dir, 'report.json'), 'utf8')).stopped_by).toBe('operator:alice');

    // No crew runs: stop and cancel are refused; a retry is kept for the next run.
    expect(ask(c, ['stop'])).toMatchObject({ code: 3, status: 'refused', refused: 'CREW_NOT_RUNNING' });
    expect(ask(c, ['cancel', '--lane', 'lane-3'])).toMatchObject({ code: 3, status: 'refused', refused: 'CREW_NOT_RUNNING' });

    // A second run: the stop it was not asked for is not applied again; lane-3 goes on and stalls on turn 2.
    const second = startCrew(c);
    let retrySeq: string | undefined;
    let retry4Seq: string | undefined;
    let staleStop: string | undefined;
    try {
      await until(() => agentOf(c, 'lane-3', 2) !== undefined, 90_000, 'lane-3\'s second turn to start');
      expect(lines(second.stdout(), 'CREW_CONTROL: ')).toEqual([]);
      // The crew frozen, two requests recorded against it (it still holds its claim), then killed before it took them.
      second.child.kill('SIGSTOP');
      const retry = await askFrozen(c, second.child, ['retry', '--lane', 'lane-2']);
      expect(retry).toMatchObject({ code: 0, status: 'requested' });
      // The operator is told first that the crew's run is stopped (its write may wait for it).
      expect(retry.stderr.split('\n')[0]).toMatch(new RegExp(`^CREW_REQUEST: the crew's run \\(pid ${second.child.pid}\\) is stopped; `));
      const retry4 = await askFrozen(c, second.child, ['retry', '--lane', 'lane-4']);
      expect(retry4).toMatchObject({ code: 0, status: 'requested' });
      const stop = await askFrozen(c, second.child, ['stop']);
      expect(stop).toMatchObject({ code: 0, status: 'requested' });
      [retrySeq, retry4Seq, staleStop] = [retry.seq, retry4.seq, stop.seq];
      second.child.kill('SIGKILL');
      expect(await second.exited).toBe(-1);
    } finally {
      if (second.child.exitCode === null && second.child.signalCode === null) second.child.kill('SIGKILL');
      await second.exited;
    }
    // The dead crew's stalled agent, left running: a crash's orphan, killed here as its machine's reboot would.
    const orphan = agentOf(c, 'lane-3', 2)!;
    killQuietly(orphan.pid);
    await until(() => !canRun(orphan.pid), 30_000, 'the orphaned agent to die');

    // The third run takes the retry (kept across the kill) and refuses the stop meant for the crew that died.
    const third = laneward(['crew', 'run', c.file, '--state', c.state], { cwd: c.dir, env: c.env });
    expect(lines(third.stdout, 'CREW_CONTROL: ')).toEqual([
      `CREW_CONTROL: seq=${retrySeq} action=retry lane=lane-2 by=human:alice status=applied`,
      `CREW_CONTROL: seq=${retry4Seq} action=retry lane=lane-4 by=human:alice status=applied`,
      `CREW_CONTROL: seq=${staleStop} action=stop lane=- by=human:alice status=refused code=CREW_NOT_RUNNING detail=recorded for a run of the crew that ended before it took the request`,
    ]);
    expect(third.code).toBe(0);
    expect(lines(third.stdout, 'CREW_SUMMARY: ')[0]).toMatch(/^CREW_SUMMARY: lanes=4 complete=4 failed=0 interrupted=0 /);
    // Taken once: a crew run again takes nothing.
    const fourth = laneward(['crew', 'run', c.file, '--state', c.state], { cwd: c.dir, env: c.env });
    expect(fourth.code).toBe(0);
    expect(lines(fourth.stdout, 'CREW_CONTROL: ')).toEqual([]);

    // No prompt went to an agent twice: every turn file was started once, the cancelled and killed ones included.
    const starts = agentStarts(c).map((s) => s.prompt);
    expect(starts.length).toBeGreaterThan(0);
    expect(starts.filter((p, i) => starts.indexOf(p) !== i)).toEqual([]);
    expect(starts).toContain(turnPrompt(c, 'lane-1', 2));
    expect(starts).toContain(turnPrompt(c, 'lane-2', 2));
    // lane-4's outside reviewer ran twice: the cancelled call and the retry's new attempt.
    expect(reviewerStarts(c, join(c.dir, 'runs', 'lane-4', 'ceo-outside-prompt.md'))).toBe(2);
  }, 400_000);
});
