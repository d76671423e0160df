import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { crewReply } from '../fixtures/model-server/crew-script.ts';
import { pauseThen, startModelServer, type ModelServer } from '../fixtures/model-server/index.ts';
import { canRun, readProcStat, statScratch } from '../workers/supervise/proc-stat.ts';
import { ensureBuilt } from './helpers/cli.ts';
import { gitOut, gitRepo, laneLines, lanewardAsync, realCrew } from './helpers/real-crew.ts';

// SIGKILL of a crew while real CLIs run its agent turns, then the same crew again: the
// turns in flight are settled (adopted or torn down), never sent again; the agents'
// sessions are continued; no CLI outlives the crews; every lane completes.

let root: string;
let server: ModelServer;
beforeAll(async () => {
  ensureBuilt();
  root = mkdtempSync(join(tmpdir(), 'laneward-real-kill-'));
  // Agent turns answer slowly (2 s before the first byte), so the kill lands inside one.
  server = await startModelServer((request) => {
    const reply = crewReply(request, 2);
    return /^# Lane \S+, turn \d+$/m.test(request.allUserText) && request.toolResult === undefined ? pauseThen(2_000, reply) : reply;
  });
});
afterAll(async () => {
  await server?.close();
  if (process.env["KEEP"] === undefined) rmSync(root, { recursive: true, force: true });
  else console.log("ROOT", root);
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

async function until(check: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('a crew of real CLIs killed mid-turn and started again', () => {
  test('no prompt is sent twice, sessions continue, no CLI is left, every lane completes', async () => {
    const repo = gitRepo(join(root, 'repo'));
    const crew = realCrew(root, server.url, {
      crew: 'killed',
      lanes: 2,
      roles: { native: 'claude-code', outside: 'codex', observer: 'claude-code', agent: 'claude-code' },
      agentFor: (i) => (i === 0 ? 'claude-code' : 'codex'),
      workspace: repo,
    });
    const first = lanewardAsync(['crew', 'run', crew.file, '--state', crew.state], { cwd: root, timeoutMs: 120_000 });
    // Killed once both lanes' agents are inside their first turn's model call.
    const agentCalls = () => server.requests.filter((r) => /^# Lane \S+, turn 1$/m.test(r.model?.allUserText ?? '') && r.model?.toolResult === undefined).length;
    await until(() => agentCalls() >= 2, 90_000);
    process.kill(first.pid, 'SIGKILL');
    const killed = await first.done;
    expect(killed.code).toBe(null);
    const second = await lanewardAsync(['crew', 'run', crew.file, '--state', crew.state], { cwd: root, timeoutMs: 180_000 }).done;
    const lanes = laneLines(second.stdout).sort((a, b) => a['lane']!.localeCompare(b['lane']!));
    expect(lanes.map((l) => `${l['lane']} ${l['status']}`), second.stdout + second.stderr).toEqual(['lane-1 complete', 'lane-2 complete']);
    // Every prompt reached the model once: the opening request of each conversation is unique.
    const openings = server.requests.filter((r) => r.model !== undefined && r.model.turn === 0).map((r) => `${r.model!.api} ${r.model!.allUserText}`);
    expect(openings.length).toBeGreaterThan(0);
    expect(new Set(openings).size).toBe(openings.length);
    // The agents' later turns continued their sessions: turn 2's first request carries turn 1's
    // prompt as history (the killed turn's reply may never have been written to the session).
    for (const lane of ['lane-1', 'lane-2']) {
      const turn2 = server.requests.find((r) => new RegExp(`^# Lane ${lane}, turn 2$`, 'm').test(r.model?.prompt ?? ''));
      expect(turn2?.model?.allUserText, lane).toMatch(new RegExp(`^# Lane ${lane}, turn 1$`, 'm'));
      expect(gitOut(repo, 'log', '--format=%s', `main..laneward/killed/${lane}`)).toContain(`laneward: ${lane} turn 2`);
    }
    // No CLI of this test is left running.
    await until(() => liveUnder(root).length === 0, 10_000);
  }, 300_000);
});
