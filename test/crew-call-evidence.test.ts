import { spawn } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { writeDemoCrew } from '../main/demo/demo-crew.ts';
import { BUNDLE, ensureBuilt, laneward, ROOT } from './helpers/cli.ts';
import { exitOf, killStrays } from './helpers/procs.ts';
import { tempRoot } from './helpers/tmp.ts';
import { newLane } from '../formats/crew/record.ts';
import { laneProgressFrom } from '../main/queue/lane-result.ts';

// Reviewer and observer calls keep their exit status or signal and their stderr's end, as agent turns do.

const root = tempRoot('crew-call-evidence');
const fixtures = join(ROOT, 'fixtures');

beforeAll(() => ensureBuilt());
afterEach(() => {
  expect(killStrays(root)).toEqual([]);
});

/** A script that writes `lines` to stderr and exits `code`. */
function failing(name: string, code: number, lines: readonly string[]): string {
  const path = join(root, name);
  writeFileSync(path, `#!/bin/sh\n${lines.map((l) => `echo '${l}' >&2`).join('\n')}\nexit ${code}\n`);
  chmodSync(path, 0o755);
  return path;
}

const lines = (text: string, prefix: string) => text.split('\n').filter((l) => l.startsWith(prefix));
type Attempt = { id: string; kind: string; voice: string | null; outcome: string; exitCode?: number | null; signal?: string | null; stderr?: string[] };

describe('crew: reviewer and observer calls carry their evidence', () => {
  // One crew: lane-1's native reviewer fails without its key, lane-2's observer crashes at its bootstrap.
  const dir = join(root, 'crew');
  const state = join(dir, 'state');
  let file = '';
  let run = { code: null as number | null, stdout: '', stderr: '' };
  beforeAll(() => {
    file = writeDemoCrew({ dir, crew: 'ev', lanes: 2, broken: 0, concurrency: 4, fixtures, instant: true });
    const value = JSON.parse(readFileSync(file, 'utf8'));
    value.lanes[0].runners = { native: [failing('reviewer.sh', 3, ['reading settings', 'fatal: ANTHROPIC_API_KEY is not set']), '{prompt}', '{result}'] };
    value.lanes[1].runners = { observer: [failing('observer.sh', 5, ['observer: no config at ~/.observer']), '{prompt}', '{result}'] };
    writeFileSync(file, JSON.stringify(value));
    const ran = laneward(['crew', 'run', file, '--state', state], { cwd: dir, timeoutMs: 120_000 });
    run = { code: ran.code, stdout: ran.stdout, stderr: ran.stderr };
  });

  test('should end each failed lane\'s CREW_LANE detail with its failed call\'s last stderr line', () => {
    expect(run.code, run.stdout + run.stderr).toBe(1);
    // Lanes end in any order: each line is found by its lane.
    const one = lines(run.stdout, 'CREW_LANE: lane=lane-1 ')[0];
    const two = lines(run.stdout, 'CREW_LANE: lane=lane-2 ')[0];
    expect(one).toMatch(/^CREW_LANE: lane=lane-1 status=failed code=CHILD_FAILED .* detail=ceo native voice failed \(CHILD_FAILED\); retry: .*; stderr: fatal: ANTHROPIC_API_KEY is not set$/);
    expect(two).toMatch(/^CREW_LANE: lane=lane-2 status=failed code=CHILD_FAILED .* detail=failed after \d+ ms \(action observe, admitted_progress_inactivity\); retry: .*; stderr: observer: no config at ~\/\.observer$/);
  });

  test('should show a failed reviewer call in crew status --lane and its JSON: LANE_CALL, its attempt\'s exit and stderr, and the fix it names', () => {
    const text = laneward(['crew', 'status', file, '--state', state, '--lane', 'lane-1'], { cwd: dir, timeoutMs: 60_000 });
    expect(text.code).toBe(1);
    expect(lines(text.stdout, 'LANE_CALL: ')).toEqual(['LANE_CALL: call=a1 code=CHILD_FAILED exit=3 signal=- stderr=fatal: ANTHROPIC_API_KEY is not set']);
    expect(lines(text.stdout, 'LANE_FIX: ')[0]).toMatch(/^LANE_FIX: set ANTHROPIC_API_KEY in the environment/);
    const attempts = lines(text.stdout, 'LANE_ATTEMPT: ');
    expect(attempts.find((l) => / kind=reviewer voice=native /.test(l))).toMatch(/ outcome=failed code=CHILD_FAILED .* exit=3 signal=- stderr=fatal: ANTHROPIC_API_KEY is not set$/);
    // The other voice ran to its end: exit 0, nothing on its stderr.
    expect(attempts.find((l) => / kind=reviewer voice=outside /.test(l))).toMatch(/ exit=0 signal=- stderr=-$/);
    const json = laneward(['crew', 'status', file, '--state', state, '--lane', 'lane-1', '--json'], { cwd: dir, timeoutMs: 60_000 });
    const story = JSON.parse(json.stdout) as { failedCall: unknown; attempts: Attempt[] };
    expect(story.failedCall).toEqual({ call: 'a1', code: 'CHILD_FAILED', exitCode: 3, signal: null, stderr: ['reading settings', 'fatal: ANTHROPIC_API_KEY is not set'] });
    expect(story.attempts.find((a) => a.voice === 'native')).toMatchObject({ id: 'a1', kind: 'reviewer', outcome: 'failed', exitCode: 3, signal: null, stderr: ['reading settings', 'fatal: ANTHROPIC_API_KEY is not set'] });
  });

  test('should show a failed observer call in crew status --lane and its JSON', () => {
    const text = laneward(['crew', 'status', file, '--state', state, '--lane', 'lane-2'], { cwd: dir, timeoutMs: 60_000 });
    expect(lines(text.stdout, 'LANE_CALL: ')).toEqual([expect.stringMatching(/^LANE_CALL: call=observer:1 code=CHILD_FAILED exit=5 signal=- stderr=observer: no config at ~\/\.observer$/)]);
    expect(lines(text.stdout, 'LANE_ATTEMPT: id=observer:1 ')).toEqual([expect.stringMatching(/ kind=observer voice=bootstrap .* exit=5 signal=- stderr=observer: no config at ~\/\.observer$/)]);
    const json = laneward(['crew', 'status', file, '--state', state, '--lane', 'lane-2', '--json'], { cwd: dir, timeoutMs: 60_000 });
    const story = JSON.parse(json.stdout) as { failedCall: { call: string; exitCode: number; stderr: string[] }; attempts: Attempt[] };
    expect(story.failedCall).toMatchObject({ call: 'observer:1', exitCode: 5, signal: null, stderr: ['observer: no config at ~/.observer'] });
    expect(story.attempts.find((a) => a.id === 'observer:1')).toMatchObject({ kind: 'observer', outcome: 'failed', exitCode: 5, signal: null, stderr: ['observer: no config at ~/.observer'] });
  });
});

describe('crew: a lane stuck in its review or at its observer shows that call\'s child', () => {
  test('should show the running reviewer\'s attempt and the running observer call, each with its pid and lease end, in crew status --lane from another shell', async () => {
    const dir = join(root, 'stuck');
    const file = writeDemoCrew({ dir, crew: 'stuck', lanes: 2, broken: 0, concurrency: 4, fixtures, instant: true });
    const stall = join(root, 'stall.sh');
    // One admitted mark, then nothing: the lease runs out only after the crew's 90 s budget.
    writeFileSync(stall, "#!/bin/sh\n{ printf '\\001' >&3; } 2>/dev/null\nwhile :; do sleep 1; done\n");
    chmodSync(stall, 0o755);
    const value = JSON.parse(readFileSync(file, 'utf8'));
    // lane-1 stalls in its review (its native reviewer), lane-2 at its observer's bootstrap.
    value.lanes[0].runners = { native: [stall, '{prompt}', '{result}'] };
    value.lanes[1].runners = { observer: [stall, '{prompt}', '{result}'] };
    value.limits.timeout_ms = 90_000;
    writeFileSync(file, JSON.stringify(value));
    const state = join(dir, 'state');
    const crew = spawn(process.execPath, [BUNDLE, 'crew', 'run', file, '--state', state], { cwd: dir, stdio: 'ignore' });
    const exited = exitOf(crew).then(() => undefined);
    try {
      for (const [lane, call] of [['lane-1', /a\d+/], ['lane-2', /observer:1/]] as const) {
        let running: string | undefined;
        const started = Date.now();
        // Until the stuck call shows: a lane's quick calls before it (lane-1's observer
        // bootstrap) are running calls too, each for a moment.
        const stuck = new RegExp(`^LANE_RUNNING: call=${call.source} `);
        while (!stuck.test(running ?? '') && Date.now() - started < 90_000) {
          const status = laneward(['crew', 'status', file, '--state', state, '--lane', lane], { cwd: dir, timeoutMs: 60_000 });
          running = lines(status.stdout, 'LANE_RUNNING: ')[0];
        }
        const match = /^LANE_RUNNING: call=(\S+) pid=(\d+) since=(\S+) mode=admitted_progress_inactivity deadline_at=- last_mark_at=- lease_deadline_at=(\S+)$/.exec(running ?? '');
        expect(match, `${lane}: ${running}`).not.toBeNull();
        const [, named, pid, since, lease] = match!;
        expect(named).toMatch(new RegExp(`^${call.source}$`));
        expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8')).toContain(stall);
        expect(Date.parse(lease!) - Date.parse(since!)).toBe(90_000);
      }
    } finally {
      crew.kill('SIGTERM');
      await exited;
    }
  }, 180_000);
});

describe('a queued lane\'s evidence', () => {
  test.each([['a3'], ['observer:2'], ['turn:1']])('should take a worker\'s lane that failed on call %s, and refuse a call named otherwise', (call) => {
    const failed = { ...newLane('c', 'l1', '/w/l1', '2026-12-02T10:00:00.000Z'), stage: 'failed', code: 'CHILD_FAILED', detail: 'x', failedCall: { call, code: 'CHILD_FAILED', exitCode: 3, signal: null, stderr: ['fatal: no key'] } };
    expect(laneProgressFrom(failed, 'c', 'l1', '/c/l1')?.failedCall).toEqual(failed.failedCall);
    expect(laneProgressFrom({ ...failed, failedCall: { ...failed.failedCall, call: `${call} x` } }, 'c', 'l1', '/c/l1')).toBeNull();
  });
});
