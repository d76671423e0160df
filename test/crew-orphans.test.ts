import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readPrivateKey } from '../main/actions/keys.ts';
import { signatureFileOf, signatureText } from '../main/actions/signature.ts';
import { writeDemoCrew } from '../main/demo/demo-crew.ts';
import { openStore } from '../main/store/store.ts';
import { BUNDLE, ensureBuilt, laneward, ROOT } from './helpers/cli.ts';
import { allPids, canRun, exitOf, killQuietly, procStat, until } from './helpers/procs.ts';
import { tempRoot } from './helpers/tmp.ts';

// A crew coordinator SIGKILLed (it alone, not its children's groups) while its reviewers
// run leaves them orphaned; the crew run again must find them. Every child runs under
// fixtures/providers/logged.mjs, which logs its start and exit, so the children running
// at once are counted from their own side.

const root = tempRoot('crew-orphans');
const fixtures = join(ROOT, 'fixtures');
const LIMIT = 4;
let serial = 0;

beforeAll(() => ensureBuilt());

/** Processes whose command line names this test's temp root or its wrapper: a child left running. */
function strays(): number[] {
  return allPids().filter((pid) => {
    if (!canRun(pid)) return false;
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

interface Crew {
  readonly dir: string;
  readonly file: string;
  readonly state: string;
  /** Every child's wrapper: "start <pid>" / "exit <pid>". */
  readonly children: string;
  /** The reviewers' own log: "start <pid> <prompt>" / "exit <pid> <prompt>". */
  readonly reviewers: string;
  readonly env: NodeJS.ProcessEnv;
}

/**
 * Two lanes whose reviewers take `steps` x 200 ms, every runner wrapped by logged.mjs.
 * `mode`: the reviewer action's timeout mode (the demo's is an fd lease). `native`: the
 * native reviewer's variant.
 */
function crew(options: { steps: number; mode?: 'total_deadline'; native?: string }): Crew {
  const dir = join(root, `crew-${++serial}`);
  const file = writeDemoCrew({ dir, crew: `o${serial}`, lanes: 2, broken: 0, concurrency: LIMIT, fixtures });
  const value = JSON.parse(readFileSync(file, 'utf8'));
  const slow = (argv: string[]) => argv.map((a) => (a === '2' ? String(options.steps) : a === '5' ? '200' : a));
  value.runners.native = slow(value.runners.native);
  value.runners.outside = slow(value.runners.outside);
  if (options.native !== undefined) value.runners.native = value.runners.native.map((a: string) => (a === 'healthy' ? options.native : a));
  for (const kind of ['native', 'outside', 'observer', 'agent']) value.runners[kind] = [process.execPath, join(fixtures, 'providers', 'logged.mjs'), ...value.runners[kind]];
  // Long enough that no budget ends while the coordinator is down.
  value.limits.timeout_ms = 60_000;
  writeFileSync(file, JSON.stringify(value));
  if (options.mode === 'total_deadline') {
    const actionsFile = join(dir, 'actions.json');
    const actions = JSON.parse(readFileSync(actionsFile, 'utf8'));
    actions.actions.review = { timeout_mode: 'total_deadline', cleanup_reserve_ms: 100, post_provider_ms: 2_000 };
    const text = `${JSON.stringify(actions, null, 2)}\n`;
    writeFileSync(actionsFile, text);
    writeFileSync(signatureFileOf(actionsFile), signatureText(Buffer.from(text), readPrivateKey(join(dir, 'keys', 'actions.key'))));
  }
  const children = join(dir, 'children.log');
  const reviewers = join(dir, 'reviewers.log');
  return { dir, file, state: join(dir, 'state'), children, reviewers, env: { ...process.env, CHILD_LOG: children, REVIEWER_LOG: reviewers } };
}

const lines = (text: string, prefix: string) => text.split('\n').filter((l) => l.startsWith(prefix));
const field = (line: string, name: string) => new RegExp(`(?:^| )${name}=(\\S+)`).exec(line)?.[1];
const logLines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter((l) => l !== '') : []);

/** Reviewers seen starting, by pid, with their prompt. */
const reviewerStarts = (c: Crew) => logLines(c.reviewers).filter((l) => l.startsWith('start ')).map((l) => ({ pid: Number(l.split(' ')[1]), prompt: l.split(' ')[2]! }));
const reviewerExits = (c: Crew) => new Set(logLines(c.reviewers).filter((l) => l.startsWith('exit ')).map((l) => Number(l.split(' ')[1])));

/** The most children the wrappers' log shows running at once. */
function peak(c: Crew): number {
  let running = 0;
  let most = 0;
  for (const line of logLines(c.children)) {
    running += line.startsWith('start ') ? 1 : -1;
    most = Math.max(most, running);
  }
  return most;
}

/**
 * Starts the crew, waits until its four reviewers (two lanes, two voices) are seen running
 * in their own log, and SIGKILLs the coordinator alone. Returns the orphans' pids.
 */
async function killMidReview(c: Crew): Promise<number[]> {
  const coordinator = spawn(process.execPath, [BUNDLE, 'crew', 'run', c.file, '--state', c.state], { cwd: c.dir, env: c.env, stdio: 'ignore' });
  const exited = exitOf(coordinator).then(({ code }) => code);
  try {
    await until(() => reviewerStarts(c).length >= 4, 60_000, 'four reviewers to start');
  } finally {
    coordinator.kill('SIGKILL');
  }
  await exited;
  return reviewerStarts(c).map((s) => s.pid);
}

function rerun(c: Crew) {
  return laneward(['crew', 'run', c.file, '--state', c.state], { cwd: c.dir, env: c.env });
}

describe('crew run after its coordinator was SIGKILLed', () => {
  it('should tear down leased orphans with proof before starting anything, redispatch them, and complete every lane within the limit', async () => {
    const c = crew({ steps: 25 });
    const orphans = await killMidReview(c);
    // The reviewers outlived their coordinator.
    expect(orphans).toHaveLength(4);
    for (const pid of orphans) expect(canRun(pid)).toBe(true);
    const again = rerun(c);
    expect(again.stderr).toBe('');
    const ends = lines(again.stdout, 'CREW_LANE: ');
    expect(ends).toHaveLength(2);
    for (const end of ends) expect(field(end, 'status')).toBe('complete');
    expect(again.code).toBe(0);
    for (const pid of orphans) expect(canRun(pid)).toBe(false);
    // Each orphan was stopped before the crew started any child of its own.
    const log = logLines(c.reviewers);
    const firstNew = log.findIndex((l) => l.startsWith('start ') && !orphans.includes(Number(l.split(' ')[1])));
    for (const pid of orphans) {
      const exit = log.indexOf(log.find((l) => l.startsWith(`exit ${pid} `))!);
      expect(exit).toBeGreaterThanOrEqual(0);
      expect(exit).toBeLessThan(firstNew);
    }
    expect(peak(c)).toBeLessThanOrEqual(LIMIT);
    for (const end of ends) expect(laneward(['artifact', 'validate', field(end, 'run')!]).code).toBe(0);
  });

  it('should adopt orphans under a total deadline, bind what they write, and start no review twice', async () => {
    const c = crew({ steps: 15, mode: 'total_deadline' });
    const orphans = await killMidReview(c);
    expect(orphans).toHaveLength(4);
    for (const pid of orphans) expect(canRun(pid)).toBe(true);
    const again = rerun(c);
    expect(again.stderr).toBe('');
    const ends = lines(again.stdout, 'CREW_LANE: ');
    expect(ends).toHaveLength(2);
    for (const end of ends) expect(field(end, 'status')).toBe('complete');
    expect(again.code).toBe(0);
    // Adopted, they ran to their own end (a clean exit, logged) and were not started again.
    const exits = reviewerExits(c);
    for (const pid of orphans) expect(exits.has(pid)).toBe(true);
    for (const pid of orphans) expect(canRun(pid)).toBe(false);
    const prompts = reviewerStarts(c).map((s) => s.prompt);
    expect(prompts.filter((p, i) => prompts.indexOf(p) !== i)).toEqual([]);
    expect(peak(c)).toBeLessThanOrEqual(LIMIT);
  });

  it('should bind the result of an orphan that finished, and fail EXECUTION_UNKNOWN only the voice whose orphan ended with none', async () => {
    // lane native reviewers crash (exit 3, no result); the outside ones write theirs.
    const c = crew({ steps: 8, native: 'crash' });
    const orphans = await killMidReview(c);
    expect(orphans).toHaveLength(4);
    // Both kinds end by themselves while no coordinator runs.
    await until(() => orphans.every((pid) => reviewerExits(c).has(pid)), 60_000, 'the orphans to end');
    const again = rerun(c);
    const ends = lines(again.stdout, 'CREW_LANE: ');
    expect(ends).toHaveLength(2);
    for (const end of ends) expect(end).toMatch(/ status=failed code=EXECUTION_UNKNOWN /);
    expect(again.code).toBe(1);
    // The outside voices were bound from their result files; the native ones, unknown.
    for (const end of ends) {
      const files = readdirSync(field(end, 'run')!);
      expect(files.filter((f) => /^ceo-outside\..+\.bound\.md$/.test(f))).toHaveLength(1);
      expect(files.filter((f) => /^ceo-native\..+\.bound\.md$/.test(f))).toHaveLength(0);
      expect(end).toMatch(/ detail=ceo native voice failed/);
    }
  });

  it('should find by its result file an agent whose spawn the killed crew never journaled, and stop it before the next turn', async () => {
    const c = crew({ steps: 2 });
    const agents = join(c.dir, 'agents.log');
    // The first turns take 12 s: the kill lands while both agents run.
    const env = { ...c.env, LANEWARD_FIXTURE_LOG: agents, LANEWARD_FIXTURE_DELAY_MS: '300', LANEWARD_FIXTURE_STEPS: '40' };
    const agentStarts = () => logLines(agents).map((l) => Number(l.split(' ')[1]));
    const coordinator = spawn(process.execPath, [BUNDLE, 'crew', 'run', c.file, '--state', c.state], { cwd: c.dir, env, stdio: 'ignore' });
    const exited = exitOf(coordinator).then(({ code }) => code);
    try {
      await until(() => agentStarts().length >= 2, 60_000, 'both lanes\' first agent turn to start');
    } finally {
      coordinator.kill('SIGKILL');
    }
    await exited;
    const orphans = agentStarts();
    for (const pid of orphans) expect(canRun(pid)).toBe(true);
    // As if the crew had died between each spawn and its journal: the turn dispatched, no child.
    const store = openStore(c.state);
    for (const { key, value } of [...store.crewLanes.getRange({ start: [`o${serial}`, ''], end: [`o${serial}`, '~'] })]) {
      expect(value.turnsDispatched).toBe(1);
      await store.crewLanes.put(key, { ...value, turnChild: null });
    }
    const again = laneward(['crew', 'run', c.file, '--state', c.state], { cwd: c.dir, env: { ...env, LANEWARD_FIXTURE_DELAY_MS: '5', LANEWARD_FIXTURE_STEPS: '2' } });
    expect(again.stderr).toBe('');
    const ends = lines(again.stdout, 'CREW_LANE: ');
    expect(ends.map((l) => field(l, 'status'))).toEqual(['complete', 'complete']);
    expect(again.code).toBe(0);
    for (const pid of orphans) expect(canRun(pid)).toBe(false);
    // Turn 1 was never run twice: the agents that started after the orphans are later turns'.
    const prompts = logLines(agents).map((l) => l.split(' ')[2]!.replace(/^.*\//, ''));
    expect(prompts.filter((p) => p === 'turn-1.prompt.md')).toHaveLength(2);
  });
});
