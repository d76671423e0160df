import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { writeDemoCrew } from '../main/demo/demo-crew.ts';
import { BUNDLE, ensureBuilt, laneward, ROOT } from './helpers/cli.ts';
import { exitOf, killStrays, until } from './helpers/procs.ts';
import { tempRoot } from './helpers/tmp.ts';
import { StderrTail, STDERR_LINE_MAX, STDERR_TAIL_BYTES } from '../workers/supervise/stderr-tail.ts';
import { evidenceFix } from '../formats/crew/call-evidence.ts';
import { renderLanePage } from '../formats/console/lane-page.ts';
import { supervise } from '../workers/supervise/supervise.ts';
import { nowMs } from '../workers/supervise/monotonic-timer.ts';
import type { SupervisionSpec } from '../workers/supervise/spec.ts';

const root = tempRoot('crew-evidence');
const fixtures = join(ROOT, 'fixtures');
let serial = 0;

beforeAll(() => ensureBuilt());
afterEach(() => {
  expect(killStrays(root)).toEqual([]);
});

/** A one-lane crew whose agent writes `fatal: OPENAI_API_KEY is not set` to stderr and exits 7. */
function noKeyCrew() {
  const dir = join(root, `crew-${++serial}`);
  const file = writeDemoCrew({ dir, crew: `e${serial}`, lanes: 1, broken: 0, concurrency: 4, fixtures });
  const value = JSON.parse(readFileSync(file, 'utf8'));
  value.runners.agent = value.runners.agent.map((a: string) => (a === 'healthy' ? 'no-key' : a));
  writeFileSync(file, JSON.stringify(value));
  return { dir, file, state: join(dir, 'state') };
}

const lines = (text: string, prefix: string) => text.split('\n').filter((l) => l.startsWith(prefix));

describe('crew: every failure carries its evidence', () => {
  it('should end a failed agent turn\'s CREW_LANE detail with its last stderr line and keep its exit status 7 in the JSON', () => {
    const c = noKeyCrew();
    const result = laneward(['crew', 'run', c.file, '--state', c.state], { cwd: c.dir });
    expect(result.code).toBe(1);
    const [line] = lines(result.stdout, 'CREW_LANE: ');
    expect(line).toMatch(/^CREW_LANE: lane=lane-1 status=failed code=CHILD_FAILED .* detail=agent turn 1: failed, exit 7; retry: laneward crew run \S+ --retry-failed --state \S+; stderr: fatal: OPENAI_API_KEY is not set$/);

    const json = laneward(['crew', 'status', c.file, '--state', c.state, '--lane', 'lane-1', '--json'], { cwd: c.dir });
    expect(json.code).toBe(1);
    const story = JSON.parse(json.stdout);
    expect(story.failedCall).toEqual({ call: 'turn:1', code: 'CHILD_FAILED', exitCode: 7, signal: null, stderr: ['loading config', 'warning: no profile', 'fatal: OPENAI_API_KEY is not set'] });
    expect(story.detail).toBe('agent turn 1: failed, exit 7; stderr: fatal: OPENAI_API_KEY is not set');
    // The fix names what the child said.
    expect(story.fix).toBe('set OPENAI_API_KEY in the environment the crew runs in (the call said "fatal: OPENAI_API_KEY is not set"), then retry the lane');
    // The lane's page (the story crew view serves) shows the call, its exit status and its stderr's end.
    const page = renderLanePage(story);
    expect(page).toContain('<p id="failed-call"><code>turn:1</code> ended exit 7 (CHILD_FAILED); the end of its stderr:</p><pre id="stderr">loading config\nwarning: no profile\nfatal: OPENAI_API_KEY is not set</pre>');
    const turn = story.attempts.find((a: { id: string }) => a.id === 'turn:1');
    expect(turn).toMatchObject({ kind: 'agent', outcome: 'failed', code: 'CHILD_FAILED', marks: 2 });
    expect(turn.durationMs).toBeGreaterThan(0);

    const text = laneward(['crew', 'status', c.file, '--state', c.state, '--lane', 'lane-1'], { cwd: c.dir });
    expect(lines(text.stdout, 'LANE_CALL: ')).toEqual(['LANE_CALL: call=turn:1 code=CHILD_FAILED exit=7 signal=- stderr=fatal: OPENAI_API_KEY is not set']);
    expect(lines(text.stdout, 'LANE_FIX: ')).toEqual(['LANE_FIX: set OPENAI_API_KEY in the environment the crew runs in (the call said "fatal: OPENAI_API_KEY is not set"), then retry the lane']);

    const report = join(c.dir, 'report.json');
    const again = noKeyCrew();
    const jsonRun = laneward(['crew', 'run', again.file, '--state', again.state, '--json', '--report', report], { cwd: again.dir });
    expect(jsonRun.code).toBe(1);
    const lane = JSON.parse(lines(jsonRun.stdout, '{"lane"')[0]!);
    expect(lane.failed_call).toEqual({ call: 'turn:1', code: 'CHILD_FAILED', exit_code: 7, signal: null, stderr: ['loading config', 'warning: no profile', 'fatal: OPENAI_API_KEY is not set'] });
    expect(JSON.parse(readFileSync(report, 'utf8')).lanes[0].failed_call.exit_code).toBe(7);
  });
});

describe('stderr tail', () => {
  it('should keep the last lines of a long stderr, escaped and bounded, dropping a line cut at the window', () => {
    const tail = new StderrTail();
    tail.push(Buffer.from('x'.repeat(STDERR_TAIL_BYTES * 3)));
    tail.push(Buffer.from('\nfirst\n\n'));
    tail.push(Buffer.from(`second\u001b[31m\r\nthird ${'y'.repeat(STDERR_LINE_MAX * 2)}\n`));
    const got = tail.lines();
    expect(got[0]).toBe('first');
    expect(got[1]).toBe('second\\u001b[31m');
    expect(got[2]).toMatch(/^third y+\.\.\. \(cut: \d+ characters\)$/);
    expect(got).toHaveLength(3);
  });

  it('should name what a recognisable stderr line says in the fix, and nothing for one it does not recognise', () => {
    expect(evidenceFix('Error: ANTHROPIC_API_KEY environment variable is not set')).toMatch(/^set ANTHROPIC_API_KEY in the environment/);
    expect(evidenceFix('/bin/sh: 1: codexx: not found')).toMatch(/^install codexx or fix the runner's argv/);
    expect(evidenceFix('env: \'gemini\': No such file or directory')).toMatch(/^install gemini or fix the runner's argv/);
    expect(evidenceFix('API Error: 401 {"error":"invalid x-api-key"}')).toMatch(/^the provider refused the call/);
    expect(evidenceFix('just some progress')).toBeNull();
  });
});

describe('supervised call: its stderr tail on its outcome', () => {
  const spec = (script: string, files?: { stdoutFile: string; stderrFile: string }): SupervisionSpec => ({
    argv: [process.execPath, '-e', script],
    stdio: 'pipe',
    action: null,
    descriptorSha256: null,
    mode: 'total_deadline',
    progress: null,
    timeoutMs: 20_000,
    cleanupReserveMs: 0,
    postProviderMs: 10_000,
    graceMs: 500,
    teardownMs: 5_000,
    stdoutLimit: 1 << 20,
    stderrLimit: 1 << 20,
    env: {},
    startedAt: nowMs(),
    ...(files ?? {}),
  });
  const script = "process.stderr.write('step 1\\nfatal: OPENAI_API_KEY is not set\\n'); process.exit(7)";

  it('should keep the last stderr lines and the exit status of a child whose stderr is piped', async () => {
    const outcome = await supervise(spec(script));
    expect(outcome).toMatchObject({ code: 'CHILD_FAILED', childExitCode: 7, signal: null, stderrTail: ['step 1', 'fatal: OPENAI_API_KEY is not set'] });
  });

  it('should keep them for a child that writes its stderr to a file of its call', async () => {
    const dir = join(root, `files-${++serial}`);
    const { mkdirSync } = await import('node:fs');
    mkdirSync(dir, { recursive: true });
    const outcome = await supervise(spec(script, { stdoutFile: join(dir, 'out.jsonl'), stderrFile: join(dir, 'err.txt') }));
    expect(outcome).toMatchObject({ code: 'CHILD_FAILED', childExitCode: 7, stderrTail: ['step 1', 'fatal: OPENAI_API_KEY is not set'] });
  });
});

describe('crew: a stuck lane shows its child', () => {
  it('should show a running turn\'s pid, its last admitted mark and its lease\'s end on the served lane page, and pid and lease from another shell', async () => {
    const dir = join(root, `crew-${++serial}`);
    const file = writeDemoCrew({ dir, crew: `s${serial}`, lanes: 1, broken: 0, concurrency: 4, fixtures });
    const value = JSON.parse(readFileSync(file, 'utf8'));
    value.runners.agent = value.runners.agent.map((a: string) => (a === 'healthy' ? 'stall' : a));
    value.limits.timeout_ms = 90_000;
    writeFileSync(file, JSON.stringify(value));
    const state = join(dir, 'state');
    const child = spawn(process.execPath, [BUNDLE, 'crew', 'run', file, '--state', state, '--serve', '0'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const exited = exitOf(child).then(({ code }) => code);
    try {
      await until(() => /^CREW_VIEW: (http:\/\/127\.0\.0\.1:\d+\/)\?token=[A-Za-z0-9_-]{43}$/m.test(stderr), 30_000, 'CREW_VIEW');
      const url = /^CREW_VIEW: (http:\/\/127\.0\.0\.1:\d+\/)\?token=[A-Za-z0-9_-]{43}$/m.exec(stderr)![1]!;
      type Running = { call: string; pid: number; since: string; mode: string; lastMarkAt: string | null; leaseDeadlineAt: string | null };
      let running = null as Running | null;
      const started = Date.now();
      while (Date.now() - started < 60_000) {
        const story = (await (await fetch(`${url}lanes/lane-1.json`)).json()) as { running?: Running | null };
        running = story.running ?? null;
        // A lane in its review shows its reviewer's child first: the turn is waited for.
        if (running?.call === 'turn:1' && running.lastMarkAt != null) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(running).toMatchObject({ call: 'turn:1', mode: 'admitted_progress_inactivity' });
      expect(existsSync(`/proc/${running!.pid}`)).toBe(true);
      expect(Date.parse(running!.leaseDeadlineAt!) - Date.parse(running!.lastMarkAt!)).toBe(90_000);
      const page = await (await fetch(`${url}lanes/lane-1`)).text();
      expect(page).toContain(`turn:1 pid ${running!.pid} since ${running!.since}, admitted_progress_inactivity, deadline none (a lease), last mark ${running!.lastMarkAt}, lease ends ${running!.leaseDeadlineAt}`);
      // Another shell reads the store: the pid and the lease from the spawn, no mark (marks live in the crew's process).
      const text = laneward(['crew', 'status', file, '--state', state, '--lane', 'lane-1'], { cwd: dir });
      expect(text.stdout.split('\n').filter((l) => l.startsWith('LANE_RUNNING: '))).toEqual([
        `LANE_RUNNING: call=turn:1 pid=${running!.pid} since=${running!.since} mode=admitted_progress_inactivity deadline_at=- last_mark_at=- lease_deadline_at=${new Date(Date.parse(running!.since) + 90_000).toISOString()}`,
      ]);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    }
  }, 120_000);
});
