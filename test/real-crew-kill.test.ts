import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { crewReply } from '../fixtures/model-server/crew-script.ts';
import { pauseThen, startModelServer, type ModelServer, type RecordedRequest } from '../fixtures/model-server/index.ts';
import { canRun, readProcStat, statScratch } from '../workers/supervise/proc-stat.ts';
import { ensureBuilt } from './helpers/cli.ts';
import { gitOut, gitRepo, laneLines, lanewardAsync, realCrew } from './helpers/real-crew.ts';

// SIGKILL of a crew while real CLIs run, then the same crew again. Each CLI writes its
// stream to a file of its call that it holds itself, so the orphans carry on and what
// they stream is there for the crew started next: it adopts them (or reads what they
// wrote, if they ended meanwhile), never sends a prompt twice, charges what they spent,
// continues their sessions, and leaves no CLI running. The kill lands while the model
// server holds a reply back (it received the prompt and is paused).

let root: string;
let server: ModelServer;
/** Which requests the server holds back before answering (the kill lands inside that pause). */
let pause: 'review' | 'agent' | 'observer' | 'none' = 'none';
/** The observer mode whose opening requests are held back when `pause` is 'observer'. */
let pauseMode = 'bootstrap';

const isReview = (prompt: string) => prompt.includes('## RESULT FORMAT');
const isObserver = (prompt: string) => prompt.includes('laneward QA observer');
const agentTurnOf = (text: string) => /^# Lane (\S+), turn (\d+)$/m.exec(text);

beforeAll(async () => {
  ensureBuilt();
  root = mkdtempSync(join(tmpdir(), 'laneward-real-kill-'));
  server = await startModelServer((request) => {
    const reply = crewReply(request, 2);
    const opening = request.turn === 0 && request.toolResult === undefined;
    if (pause === 'review' && opening && isReview(request.allUserText)) return pauseThen(3_000, reply);
    if (pause === 'observer' && opening && isObserver(request.allUserText) && observerOf(request.allUserText)?.[2] === pauseMode) return pauseThen(3_000, reply);
    if (pause === 'agent' && /^# Lane \S+, turn 1$/m.test(request.allUserText) && request.toolResult === undefined && !isObserver(request.allUserText)) return pauseThen(2_000, reply);
    return reply;
  });
});
afterAll(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

/** Live processes whose environment mentions `needle` (the test's temp root): CLIs this test started. */
function liveUnder(needle: string): number[] {
  const found: number[] = [];
  const scratch = statScratch();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (!readFileSync(`/proc/${pid}/environ`).includes(needle)) continue;
    } catch {
      continue;
    }
    const stat = readProcStat(pid, scratch);
    if (stat !== undefined && canRun(stat)) found.push(pid);
  }
  return found;
}

async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Model calls since `from` (this test's), with their parsed view. */
const calls = (from: number) => server.requests.slice(from).filter((r): r is RecordedRequest & { model: NonNullable<RecordedRequest['model']> } => r.model !== undefined);

/** The first line of a reviewer's prompt names its run, phase and voice: one conversation per voice of a phase. */
const reviewKey = (text: string) => /^# Review: .*$/m.exec(text)?.[0] ?? null;

/**
 * What the server billed each lane's agent: every request of its agent conversations at
 * the fixed usage of a fake reply (1000 tokens in, 50 out) and claude-sonnet-4-5's prices
 * ($3 / $15 per million): $0.00375 a request.
 */
function agentBill(from: number): Record<string, number> {
  const bill: Record<string, number> = {};
  for (const r of calls(from)) {
    const text = r.model.allUserText;
    const turn = agentTurnOf(text);
    if (turn === null || isReview(text) || isObserver(text) || r.api !== 'anthropic') continue;
    bill[turn[1]!] = Number(((bill[turn[1]!] ?? 0) + 0.00375).toFixed(6));
  }
  return bill;
}

/** The observer's lane and mode, from its prompt's first line. */
const observerOf = (text: string) => /^# laneward QA observer: lane (\S+), mode (\S+)$/m.exec(text);

/** What the server billed each lane's observer calls: every request of theirs, $0.00375 each (see {@link agentBill}). */
function observerBill(from: number): Record<string, number> {
  const bill: Record<string, number> = {};
  for (const r of calls(from)) {
    const seen = observerOf(r.model.allUserText);
    if (seen === null || r.api !== 'anthropic') continue;
    const lane = /lane-\d+$/.exec(seen[1]!)?.[0] ?? seen[1]!;
    bill[lane] = Number(((bill[lane] ?? 0) + 0.00375).toFixed(6));
  }
  return bill;
}

function crewIn(name: string) {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  const repo = gitRepo(join(dir, 'repo'));
  // claude agents: a codex agent's shell commands need its sandbox helper, which this machine may lack.
  const crew = realCrew(dir, server.url, { crew: name, lanes: 2, roles: { native: 'claude-code', outside: 'codex', observer: 'claude-code', agent: 'claude-code' }, workspace: repo });
  return { dir, repo, crew };
}

async function killWhen(dir: string, crew: { file: string; state: string }, ready: () => boolean, what: string): Promise<void> {
  const first = lanewardAsync(['crew', 'run', crew.file, '--state', crew.state], { cwd: dir, timeoutMs: 180_000 });
  try {
    await until(ready, 150_000, what);
  } finally {
    process.kill(first.pid, 'SIGKILL');
  }
  expect((await first.done).code).toBe(null);
}

describe('a crew of real CLIs SIGKILLed and started again', () => {
  test('during review: every reviewer voice is sent once, its orphan adopted or read, every lane completes', async () => {
    const from = server.requests.length;
    const { dir, crew } = crewIn('killed-review');
    pause = 'review';
    // Both lanes' first phase, both voices: four reviewer prompts held by the server.
    const held = () => calls(from).filter((r) => r.model.turn === 0 && isReview(r.model.allUserText)).length >= 4;
    await killWhen(dir, crew, held, 'four reviewer prompts');
    const orphans = liveUnder(dir);
    expect(orphans.length).toBeGreaterThan(0);
    pause = 'none';
    const second = await lanewardAsync(['crew', 'run', crew.file, '--state', crew.state], { cwd: dir, timeoutMs: 240_000 }).done;
    const lanes = laneLines(second.stdout).sort((a, b) => a['lane']!.localeCompare(b['lane']!));
    expect(lanes.map((l) => `${l['lane']} ${l['status']}`), second.stdout + second.stderr).toEqual(['lane-1 complete', 'lane-2 complete']);
    expect(second.code).toBe(0);
    expect(second.stdout).not.toMatch(/EXECUTION_UNKNOWN/);
    // Each voice of each phase reached the model once: no reviewer was torn down and sent again.
    const voices = calls(from).filter((r) => r.model.turn === 0 && isReview(r.model.allUserText)).map((r) => reviewKey(r.model.allUserText));
    expect(voices.filter((v) => v === null)).toEqual([]);
    expect(voices.filter((v, i) => voices.indexOf(v) !== i)).toEqual([]);
    // Two lanes, two phases, two voices.
    expect(voices).toHaveLength(8);
    await until(() => liveUnder(dir).length === 0, 15_000, 'no CLI of the test left');
  }, 420_000);

  test('during an agent turn: the orphan is adopted, no prompt is sent twice, its spend is charged, its session continues', async () => {
    const from = server.requests.length;
    const { dir, repo, crew } = crewIn('killed-turn');
    pause = 'agent';
    // Killed once both lanes' agents are inside their first turn's model call.
    const inside = () => calls(from).filter((r) => /^# Lane \S+, turn 1$/m.test(r.model.allUserText) && r.model.toolResult === undefined && !isObserver(r.model.allUserText) && !isReview(r.model.allUserText)).length >= 2;
    await killWhen(dir, crew, inside, 'both agents inside turn 1');
    pause = 'none';
    const report = join(dir, 'report.json');
    const second = await lanewardAsync(['crew', 'run', crew.file, '--state', crew.state, '--report', report], { cwd: dir, timeoutMs: 240_000 }).done;
    const lanes = laneLines(second.stdout).sort((a, b) => a['lane']!.localeCompare(b['lane']!));
    expect(lanes.map((l) => `${l['lane']} ${l['status']}`), second.stdout + second.stderr).toEqual(['lane-1 complete', 'lane-2 complete']);
    // Every prompt reached the model once: the opening request of each conversation is unique.
    const openings = calls(from).filter((r) => r.model.turn === 0).map((r) => `${r.model.api} ${r.model.allUserText}`);
    expect(openings.length).toBeGreaterThan(0);
    expect(openings.filter((o, i) => openings.indexOf(o) !== i)).toEqual([]);
    // The lane's agent spend is what the server billed, the killed turn's requests included.
    const spend = JSON.parse(readFileSync(report, 'utf8')).lanes.map((l: { lane: string; agent_usd: number }) => [l.lane, Number(l.agent_usd.toFixed(6))]);
    expect(Object.fromEntries(spend)).toEqual(agentBill(from));
    expect(agentBill(from)).toEqual({ 'lane-1': 0.015, 'lane-2': 0.015 });
    for (const lane of ['lane-1', 'lane-2']) {
      // Turn 2 continued the session turn 1 (the killed one) ran in: it carries turn 1's reply.
      const turn2 = calls(from).find((r) => new RegExp(`^# Lane ${lane}, turn 2$`, 'm').test(r.model.prompt));
      expect(turn2?.model.allUserText, lane).toMatch(new RegExp(`^# Lane ${lane}, turn 1$`, 'm'));
      expect(JSON.stringify(turn2?.body), lane).toContain('Appended turn 1 to NOTES.md.');
      expect(gitOut(repo, 'log', '--format=%s', `main..${gitOut(repo, 'for-each-ref', '--format=%(refname:short)', `refs/heads/laneward/killed-turn/*/${lane}`)}`).split('\n')).toEqual([`laneward: ${lane} turn 2`, `laneward: ${lane} turn 1`]);
    }
    await until(() => liveUnder(dir).length === 0, 15_000, 'no CLI of the test left');
  }, 420_000);

  test.each(['bootstrap', 'cadence', 'cross-check'])('during an observer call (%s): the orphan is adopted or read, each observer prompt reaches the model once, its spend is charged', async (mode) => {
    const from = server.requests.length;
    const { dir, crew } = crewIn(`killed-observer-${mode}`);
    pause = 'observer';
    pauseMode = mode;
    // Killed once both lanes' prompts of that mode are held by the server.
    const held = () => calls(from).filter((r) => r.model.turn === 0 && isObserver(r.model.allUserText) && observerOf(r.model.allUserText)?.[2] === mode).length >= 2;
    await killWhen(dir, crew, held, `both ${mode} prompts`);
    expect(liveUnder(dir).length).toBeGreaterThan(0);
    pause = 'none';
    const report = join(dir, 'report.json');
    const second = await lanewardAsync(['crew', 'run', crew.file, '--state', crew.state, '--report', report], { cwd: dir, timeoutMs: 240_000 }).done;
    const lanes = laneLines(second.stdout).sort((a, b) => a['lane']!.localeCompare(b['lane']!));
    expect(lanes.map((l) => `${l['lane']} ${l['status']}`), second.stdout + second.stderr).toEqual(['lane-1 complete', 'lane-2 complete']);
    expect(second.code).toBe(0);
    // Every observer prompt reached the model once: bootstrap, cadence checks and cross-check alike.
    const observed = calls(from).filter((r) => r.model.turn === 0 && isObserver(r.model.allUserText)).map((r) => r.model.allUserText);
    const modes = observed.map((text) => `${/lane-\d+$/.exec(observerOf(text)?.[1] ?? '')?.[0]} ${observerOf(text)?.[2]}`);
    const twice = observed.filter((o, i) => observed.indexOf(o) !== i).length;
    process.stdout.write(`real-crew-kill observer ${mode}: prompts=${observed.length} twice=${twice} bill=${JSON.stringify(observerBill(from))}\n`);
    expect(modes.filter((m) => m.endsWith(' bootstrap')).sort()).toEqual(['lane-1 bootstrap', 'lane-2 bootstrap']);
    expect(observed.filter((o, i) => observed.indexOf(o) !== i)).toEqual([]);
    expect(modes.filter((m) => m.endsWith(' cross-check')).sort()).toEqual(['lane-1 cross-check', 'lane-2 cross-check']);
    // The lane's observer spend is what the server billed, the killed bootstrap's request included.
    const spend = JSON.parse(readFileSync(report, 'utf8')).lanes.map((l: { lane: string; observer_usd: number }) => [l.lane, Number(l.observer_usd.toFixed(6))]);
    expect(Object.fromEntries(spend)).toEqual(observerBill(from));
    expect(Object.keys(observerBill(from)).sort()).toEqual(['lane-1', 'lane-2']);
    await until(() => liveUnder(dir).length === 0, 15_000, 'no CLI of the test left');
  }, 420_000);
});
