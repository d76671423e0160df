import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { RESULT_CODES } from '../formats/codes/codes.ts';
import { isLanewardError } from '../formats/codes/error.ts';
import type { LaneStory } from '../formats/console/lane-story.ts';
import { readLaneStory } from '../main/console/lane-story.ts';
import { diffStat } from '../main/console/diff-stat.ts';
import { retryAdvice } from '../main/crew/retry-advice.ts';
import { loadCrew } from '../main/crew/load-crew.ts';
import { writeDemoCrew } from '../main/demo/demo-crew.ts';
import { openStore, type Store } from '../main/store/store.ts';
import { BUNDLE, ensureBuilt, laneward, ROOT } from './helpers/cli.ts';
import { exitOf, killStrays, until } from './helpers/procs.ts';
import { tempRoot } from './helpers/tmp.ts';

// Stories are read the way the console's other process reads them: a crew run by the CLI,
// its state root opened read-only here, while it runs and after it ended.

const root = tempRoot('lane-story');
const fixtures = join(ROOT, 'fixtures');
const node = process.execPath;
let serial = 0;

beforeAll(() => ensureBuilt());

afterEach(() => {
  expect(killStrays(root)).toEqual([]);
});

const reviewer = (variant: string) => [node, join(fixtures, 'reviewers', 'reviewer.mjs'), '--variant', variant, '--steps', '2', '--delay-ms', '5', '{prompt}', '{result}'];
const failingObserver = [node, join(fixtures, 'observers', 'fail.mjs'), '{prompt}', '{result}', '--delay-ms', '2'];

/** An instant demo crew whose lanes get the runners given (by index), the rest healthy. */
function crew(runners: readonly (Record<string, string[]> | undefined)[]) {
  const dir = join(root, `crew-${++serial}`);
  const file = writeDemoCrew({ dir, crew: `c${serial}`, lanes: runners.length, broken: 0, concurrency: 4, fixtures, instant: true });
  const value = JSON.parse(readFileSync(file, 'utf8'));
  runners.forEach((r, i) => {
    if (r !== undefined) value.lanes[i].runners = r;
  });
  writeFileSync(file, JSON.stringify(value));
  return { dir, file, crew: `c${serial}`, state: join(dir, 'state') };
}

const lines = (text: string, prefix: string) => text.split('\n').filter((l) => l.startsWith(prefix));
const field = (line: string, name: string) => new RegExp(`(?:^| )${name}=(\\S+)`).exec(line)?.[1];
/** The state root opened read-only, or undefined while it is not there yet (STATE_UNAVAILABLE). */
function tryOpen(state: string): Store | undefined {
  if (!existsSync(join(state, 'data.mdb'))) return undefined;
  try {
    return openStore(state, { readOnly: true });
  } catch (error) {
    if (isLanewardError(error) && error.code === 'STATE_UNAVAILABLE') return undefined;
    throw error;
  }
}

const stageNames = (story: LaneStory) => story.stages.map((s) => s.stage);
const attemptsOf = (story: LaneStory) => story.attempts.map((a) => [a.id, a.kind, a.voice, a.outcome, a.code]);

describe('readLaneStory: a crew that ended', () => {
  const c = crew([undefined, { native: reviewer('crash') }, { observer: failingObserver }]);
  let store: Store;
  let retry: string;

  beforeAll(() => {
    const result = laneward(['crew', 'run', c.file, '--state', c.state], { cwd: c.dir });
    expect(result.code).toBe(1);
    const ends = lines(result.stdout, 'CREW_LANE: ');
    expect(ends.map((l) => [field(l, 'lane'), field(l, 'status'), field(l, 'code') ?? null]).sort()).toEqual([
      ['lane-1', 'complete', null],
      ['lane-2', 'failed', 'CHILD_FAILED'],
      ['lane-3', 'failed', 'QA_CROSS_CHECK_FAILED'],
    ]);
    // The command the crew itself printed for its failed lanes.
    // Before the failed reviewer's last stderr line, which ends the detail.
    retry = /; retry: (.+?)(?:; stderr: [^;]*)?$/.exec(ends.find((l) => l.includes('lane=lane-2'))!)![1]!;
    expect(retry).toBe(retryAdvice(c.file, c.state));
    store = openStore(c.state, { readOnly: true });
  });

  const story = (lane: string) => readLaneStory(store, { crew: c.crew, lane, retryCommand: retry })!;

  test('should tell a complete lane: every stage, four reviewers, its observer calls, three turns; nothing to fix', () => {
    const s = story('lane-1');
    expect([s.state, s.code, s.fix, s.retry]).toEqual(['complete', null, null, null]);
    expect(stageNames(s)).toEqual(['queued', 'bootstrap', 'review', 'answer', 'work', 'cross-check', 'export', 'complete']);
    // Each stage ends where the next begins; the terminal one ends where it began.
    s.stages.forEach((span, i) => expect(span.endedAt).toBe(s.stages[i + 1]?.startedAt ?? span.startedAt));
    expect(attemptsOf(s)).toEqual([
      ['a1', 'reviewer', 'native', 'completed', null],
      ['a2', 'reviewer', 'outside', 'completed', null],
      ['a3', 'reviewer', 'native', 'completed', null],
      ['a4', 'reviewer', 'outside', 'completed', null],
      ['observer:1', 'observer', 'bootstrap', 'completed', null],
      ['observer:2', 'observer', 'cadence', 'completed', null],
      ['observer:3', 'observer', 'cadence', 'completed', null],
      ['observer:4', 'observer', 'cross-check', 'completed', null],
      ['turn:1', 'agent', null, 'completed', null],
      ['turn:2', 'agent', null, 'completed', null],
      ['turn:3', 'agent', null, 'completed', null],
    ]);
    expect(s.attempts.slice(0, 4).map((a) => [a.phase, a.model, a.marks, a.cleanupConfirmed])).toEqual([
      ['ceo', 'claude-fixture', 1, true],
      ['ceo', 'gpt-fixture', 1, true],
      ['eng', 'claude-fixture', 1, true],
      ['eng', 'gpt-fixture', 1, true],
    ]);
    // Reviewers and observer calls carry when they started and how long they ran.
    for (const a of s.attempts.filter((a) => a.kind !== 'agent')) expect([typeof a.startedAt, typeof a.durationMs, a.cleanupConfirmed]).toEqual(['string', 'number', true]);
    expect(s.review).toMatchObject({ status: 'complete', spendUsd: 0 });
    expect(s.review.phases.map((p) => [p.phase, p.state, p.native, p.outside, p.findings, p.consensus?.confirmed])).toEqual([
      ['ceo', 'closed', 'completed', 'completed', 2, 1],
      ['eng', 'closed', 'completed', 'completed', 2, 1],
    ]);
    expect(s.review.gate).toMatchObject({ rev: 1, state: 'answered', items: 1, decisions: 1, answer: 'as-is', by: 'agent:laneward-crew', choices: [{ item: 'p1', chosen: 'a', status: 'approved' }] });
    expect(s.qa.verdicts.map((v) => [v.call, v.mode, v.verdict, v.code])).toEqual([
      [1, 'bootstrap', 'pass', null],
      [2, 'cadence', 'pass', null],
      [3, 'cadence', 'pass', null],
      [4, 'cross-check', 'pass', null],
    ]);
    for (const v of s.qa.verdicts) expect(Number.isNaN(Date.parse(v.at!))).toBe(false);
    expect(s.agent).toMatchObject({ turnsDispatched: 3, turnsDone: 3, lostTurns: [] });
    expect([s.workspace, s.qaLane, s.costUsd]).toEqual([null, `${c.crew}.lane-1`, 0]);
    expect(s.files.map((f) => f.path)).toContain('run.json');
    expect(s.files.map((f) => f.path)).toContain('agent/turn-3.json');
  });

  test('should tell a lane whose native reviewer crashed: its failed attempt, the fix and the exact retry', () => {
    const s = story('lane-2');
    expect([s.state, s.code]).toEqual(['failed', 'CHILD_FAILED']);
    expect(stageNames(s)).toEqual(['queued', 'bootstrap', 'review', 'failed']);
    expect(attemptsOf(s)).toEqual([
      ['a1', 'reviewer', 'native', 'failed', 'CHILD_FAILED'],
      ['a2', 'reviewer', 'outside', 'completed', null],
      ['observer:1', 'observer', 'bootstrap', 'completed', null],
    ]);
    expect(s.attempts[0]).toMatchObject({ phase: 'ceo', model: null, marks: 2, cleanupConfirmed: true });
    expect(s.review.phases.map((p) => [p.phase, p.state, p.native, p.outside])).toEqual([
      ['ceo', 'open', 'failed', 'completed'],
      ['eng', 'waiting', 'pending', 'pending'],
    ]);
    expect([s.review.status, s.review.gate]).toEqual(['awaiting_result', null]);
    expect(s.fix).toBe(RESULT_CODES.CHILD_FAILED.fix);
    expect(s.retry).toBe(retry);
    expect(s.agent.turnsDispatched).toBe(0);
  });

  test('should tell a lane whose observer failed every check: each verdict with its code and guidance', () => {
    const s = story('lane-3');
    expect([s.state, s.code]).toEqual(['failed', 'QA_CROSS_CHECK_FAILED']);
    expect(stageNames(s)).toEqual(['queued', 'bootstrap', 'review', 'answer', 'work', 'cross-check', 'work', 'cross-check', 'work', 'cross-check', 'work', 'cross-check', 'failed']);
    expect(s.qa.verdicts.map((v) => [v.call, v.mode, v.verdict, v.code])).toEqual([
      [1, 'bootstrap', 'pass', null],
      [2, 'cadence', 'fail', null],
      [3, 'cadence', 'fail', null],
      [4, 'cross-check', 'fail', 'QA_CROSS_CHECK_FAILED'],
      [5, 'cross-check', 'fail', 'QA_CROSS_CHECK_FAILED'],
      [6, 'cadence', 'fail', null],
      [7, 'cross-check', 'fail', 'QA_CROSS_CHECK_FAILED'],
      [8, 'cadence', 'fail', null],
      [9, 'cross-check', 'fail', 'QA_CROSS_CHECK_FAILED'],
    ]);
    expect(new Set(s.qa.verdicts.slice(1).map((v) => v.guidance))).toEqual(new Set(['Observer guidance: rerun the tests before cadence', 'Observer guidance: rerun the tests before cross-check']));
    expect(s.attempts.filter((a) => a.kind === 'agent').map((a) => a.outcome)).toEqual(['completed', 'completed', 'completed', 'completed', 'completed', 'completed']);
    expect(s.agent).toMatchObject({ turnsDispatched: 6, turnsDone: 6 });
    expect(s.fix).toBe(RESULT_CODES.QA_CROSS_CHECK_FAILED.fix);
    expect(s.retry).toBe(retry);
  });

  test('should have no story for a lane without progress or run directory, and a queued one given its run directory', () => {
    expect(readLaneStory(store, { crew: c.crew, lane: 'lane-9', retryCommand: retry })).toBe(undefined);
    const queued = readLaneStory(store, { crew: c.crew, lane: 'lane-9', retryCommand: retry, runDir: join(c.dir, 'runs', 'lane-9') })!;
    expect([queued.state, queued.stages, queued.attempts, queued.files, queued.fix, queued.retry, queued.run]).toEqual(['queued', [], [], [], null, null, null]);
  });
});

describe('readLaneStory: a crew still running', () => {
  test('should show the open stage and the reviewer still out, then the interrupted end once the crew is stopped', async () => {
    const c = crew([{ outside: reviewer('stall') }]);
    const child = spawn(node, [BUNDLE, 'crew', 'run', c.file, '--state', c.state], { cwd: c.dir, stdio: 'ignore' });
    const exited = exitOf(child).then(({ code, signal }) => code ?? (signal === null ? null : 128));
    try {
      // A reader that opens the root before the crew created its databases is refused (and opens it again).
      let store: Store | undefined;
      await until(() => (store = tryOpen(c.state)) !== undefined, 60_000, 'the crew to create its store');
      const read = () => readLaneStory(store!, { crew: c.crew, lane: 'lane-1', retryCommand: 'retry' });
      // The stalled outside voice is spawned: its attempt is journaled with its child. (Only
      // a spawned one is cancelled: a stop between its dispatch and its spawn leaves the
      // attempt open for the next run, which under load the stop below would hit.)
      const runDir = join(c.dir, 'runs', 'lane-1');
      const spawned = () => {
        if (!existsSync(join(runDir, '.laneward-run'))) return false;
        const record = store!.runs.get(readFileSync(join(runDir, '.laneward-run'), 'utf8').split(' ')[0]!);
        return Object.values(record?.attempts ?? {}).some((a) => a.voice === 'outside' && a.state === 'open' && a.child != null);
      };
      await until(() => read()?.attempts.some((a) => a.voice === 'outside' && a.outcome === 'open' && a.startedAt !== null) === true && spawned(), 60_000, 'the outside reviewer to be spawned');
      const running = read()!;
      expect(running.state).toBe('review');
      expect(running.stages.at(-1)).toMatchObject({ stage: 'review', endedAt: null, durationMs: null });
      expect(running.attempts.find((a) => a.voice === 'outside')).toMatchObject({ kind: 'reviewer', phase: 'ceo', outcome: 'open', code: null, durationMs: null });
      expect([running.fix, running.retry]).toEqual([null, null]);
      child.kill('SIGTERM');
      expect(await exited).toBe(143);
      const ended = read()!;
      expect([ended.state, ended.code, ended.retry]).toEqual(['interrupted', 'CANCELLED', null]);
      expect(ended.fix).toBe(RESULT_CODES.CANCELLED.fix);
      expect(stageNames(ended)).toEqual(['queued', 'bootstrap', 'review', 'interrupted']);
      expect(ended.stages.at(-1)!.endedAt).toBe(ended.stages.at(-1)!.startedAt);
      expect(ended.attempts.find((a) => a.voice === 'outside')).toMatchObject({ outcome: 'cancelled', code: 'CANCELLED', cleanupConfirmed: true });
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
  });
});

/** Git for the tests' own setup, with an identity and without the caller's GIT_ variables. */
function git(cwd: string, ...args: string[]): string {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('GIT_')) env[key] = value;
  const run = spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgSign=false', ...args], { cwd, env, encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  return run.stdout.trim();
}

describe('readLaneStory: a crew with a workspace', () => {
  test('should show each lane\'s branch and head, its diff stat from the base when asked, and never list its worktree', () => {
    const repo = join(root, 'ws-repo');
    mkdirSync(repo);
    git(repo, 'init', '-q');
    writeFileSync(join(repo, 'a.txt'), 'one\n');
    git(repo, 'add', '.');
    git(repo, 'commit', '-qm', 'base');
    // An agent that changes its worktree each turn and reports finish at once (one mark on fd 3 for its lease).
    const agent = join(root, 'ws-agent.sh');
    writeFileSync(agent, `#!/bin/sh\n{ printf '\\001' >&3; } 2>/dev/null\necho turn >> work.txt\nprintf '{"text":"added a line","diff":true,"finish":true}' > "$1"\n`);
    chmodSync(agent, 0o755);
    const c = crew([undefined, { observer: failingObserver }]);
    const value = JSON.parse(readFileSync(c.file, 'utf8'));
    value.workspace = { repo };
    value.runners.agent = [agent, '{result}'];
    writeFileSync(c.file, JSON.stringify(value));
    const result = laneward(['crew', 'run', c.file, '--state', c.state], { cwd: c.dir });
    expect(lines(result.stdout, 'CREW_LANE: ').map((l) => [field(l, 'lane'), field(l, 'status')]).sort()).toEqual([
      ['lane-1', 'complete'],
      ['lane-2', 'failed'],
    ]);
    const base = loadCrew(c.file, c.dir).workspace!.commit;
    const store = openStore(c.state, { readOnly: true });
    const read = (lane: string, diff: boolean) => readLaneStory(store, { crew: c.crew, lane, retryCommand: null, workspace: { repo, base }, diffStat: diff })!;
    const complete = read('lane-1', true);
    // A complete lane's worktree is removed; its work stays on its branch.
    // Each lane's branch is of this crew run: laneward/<crew>/<run id>/<lane>.
    const branch1 = complete.workspace!.branch!;
    expect(branch1).toMatch(new RegExp(`^laneward/${c.crew}/\\d{8}T\\d{6}Z-[0-9a-f]{6}/lane-1$`));
    expect(complete.workspace).toEqual({ branch: branch1, head: git(repo, 'rev-parse', branch1), worktree: null, diffStat: '1 file changed, 1 insertion(+)' });
    expect(read('lane-1', false).workspace!.diffStat).toBe(null);
    // A failed lane keeps its worktree for inspection: six turns, six lines, none of its files in the listing.
    const failed = read('lane-2', true);
    expect(failed.workspace).toMatchObject({ branch: branch1.replace(/lane-1$/, 'lane-2'), worktree: join(c.dir, 'runs', 'lane-2', 'worktree'), diffStat: '1 file changed, 6 insertions(+)' });
    expect(existsSync(join(c.dir, 'runs', 'lane-2', 'worktree', 'work.txt'))).toBe(true);
    expect(failed.files.filter((f) => f.path.startsWith('worktree'))).toEqual([]);
    expect(failed.files.map((f) => f.path)).toContain('agent/turn-6.json');
  });
});

describe('diffStat', () => {
  test('should count the files and lines between two commits, and be null for what is not a commit id', () => {
    const repo = join(root, 'repo');
    mkdirSync(repo);
    git(repo, 'init', '-q');
    writeFileSync(join(repo, 'a.txt'), 'one\n');
    git(repo, 'add', '.');
    git(repo, 'commit', '-qm', 'base');
    const base = git(repo, 'rev-parse', 'HEAD');
    writeFileSync(join(repo, 'a.txt'), 'one\ntwo\n');
    writeFileSync(join(repo, 'b.txt'), 'three\n');
    git(repo, 'add', '.');
    git(repo, 'commit', '-qm', 'work');
    const head = git(repo, 'rev-parse', 'HEAD');
    expect(diffStat({ repo, base, head })).toBe('2 files changed, 2 insertions(+)');
    expect(diffStat({ repo, base, head: base })).toBe('no changes');
    expect(diffStat({ repo, base, head: '--output=/tmp/x' })).toBe(null);
    expect(diffStat({ repo, base, head: 'HEAD' })).toBe(null);
    expect(diffStat({ repo, base, head: 'f'.repeat(40) })).toBe(null);
    expect(diffStat({ repo: join(root, 'no-repo'), base, head })).toBe(null);
  });
});
