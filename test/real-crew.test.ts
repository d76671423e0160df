import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { crewScript } from '../fixtures/model-server/crew-script.ts';
import { startModelServer, type ModelServer } from '../fixtures/model-server/index.ts';
import { ensureBuilt } from './helpers/cli.ts';
import { gitOut, gitRepo, laneLines, lanewardAsync, realCrew } from './helpers/real-crew.ts';

// A crew of the real CLIs (claude-code and codex, pinned in test/real-clis) against the
// fake model server: reviewers, observer and agents in worktrees of a real repository.

let root: string;
let server: ModelServer;
beforeAll(async () => {
  ensureBuilt();
  root = mkdtempSync(join(tmpdir(), 'laneward-real-crew-'));
  server = await startModelServer(crewScript({ doneAt: 2 }));
});
afterAll(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('a crew of real claude-code and codex lanes', () => {
  test('four lanes review, work in their worktrees over two turns, pass the cross-check, export and validate', async () => {
    const repo = gitRepo(join(root, 'repo'));
    const crew = realCrew(root, server.url, {
      crew: 'real',
      lanes: 4,
      roles: { native: 'claude-code', outside: 'codex', observer: 'claude-code', agent: 'codex' },
      agentFor: (i) => (i % 2 === 0 ? 'codex' : 'claude-code'),
      workspace: repo,
    });
    const ran = await lanewardAsync(['crew', 'run', crew.file, '--state', crew.state, '--report', join(root, 'report.json')], { cwd: root, timeoutMs: 240_000 }).done;
    const lanes = laneLines(ran.stdout).sort((a, b) => a['lane']!.localeCompare(b['lane']!));
    expect(lanes.map((l) => `${l['lane']} ${l['status']}`), ran.stdout + ran.stderr).toEqual(['lane-1 complete', 'lane-2 complete', 'lane-3 complete', 'lane-4 complete'].map(String));
    expect(ran.code).toBe(0);
    for (const lane of lanes) {
      // A branch of this crew run: laneward/<crew>/<run id>/<lane>.
      const branch = lane['branch']!;
      expect(branch).toMatch(new RegExp(`^laneward/real/\\d{8}T\\d{6}Z-[0-9a-f]{6}/${lane['lane']}$`));
      // The lane's commits are on its branch, one per diff-bearing turn, and hold the agent's work.
      expect(gitOut(repo, 'log', '--format=%s', `main..${branch}`).split('\n')).toEqual([`laneward: ${lane['lane']} turn 2`, `laneward: ${lane['lane']} turn 1`]);
      expect(gitOut(repo, 'rev-parse', branch)).toBe(lane['head']);
      expect(gitOut(repo, 'show', `${branch}:NOTES.md`)).toBe(`lane ${lane['lane']} turn 1\nlane ${lane['lane']} turn 2`);
      // A complete lane's worktree is removed; its branch stays.
      expect(existsSync(join(root, 'runs', lane['lane']!, 'worktree'))).toBe(false);
    }
    const validated = await lanewardAsync(['artifact', 'validate', join(root, 'runs')], { cwd: root, timeoutMs: 60_000 }).done;
    expect(validated.stdout).toMatch(/^ARTIFACT_SUMMARY: runs=4 valid=4 invalid=0/m);
    const report = JSON.parse(readFileSync(join(root, 'report.json'), 'utf8'));
    // Marks were admitted from the real streams (tool and message lifecycles).
    expect(report.stats.marks).toBeGreaterThan(0);
    // The codex agents continued one thread: every turn after the first resumed it.
    const agentSessions = report.lanes.map((l: { agent_session: string }) => l.agent_session);
    expect(agentSessions.every((s: unknown) => typeof s === 'string' && s !== '')).toBe(true);
    // Agent spend from the streams, each turn charged once although a resumed session
    // reports its running total: claude $0.00375 per reply, codex 1000/50 tokens at $1/$10
    // per million; two turns of two replies each.
    const spend = Object.fromEntries(report.lanes.map((l: { lane: string; agent_usd: number }) => [l.lane, Number(l.agent_usd.toFixed(6))]));
    expect(spend).toEqual({ 'lane-1': 0.006, 'lane-2': 0.015, 'lane-3': 0.006, 'lane-4': 0.015 });
  }, 300_000);
});
