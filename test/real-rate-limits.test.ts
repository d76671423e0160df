import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { crewReply } from '../fixtures/model-server/crew-script.ts';
import { httpError, startModelServer, type ModelServer, type ModelRequest } from '../fixtures/model-server/index.ts';
import { openStore, readJournal } from '../main/store/store.ts';
import { ensureBuilt } from './helpers/cli.ts';
import { gitRepo, laneLines, lanewardAsync, realCrew } from './helpers/real-crew.ts';

// Rate limits, costs and spend caps of real CLIs (claude-code and codex, pinned in
// test/real-clis) against the fake model server, through the built CLI.

let root: string;
let server: ModelServer;
beforeAll(async () => {
  ensureBuilt();
  root = mkdtempSync(join(tmpdir(), 'laneward-real-rate-'));
  server = await startModelServer((r) => crewReply(r, 1));
});
afterAll(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

const MARKER = /\bLANE-(\d+)\b/;
const markerOf = (r: ModelRequest): string | undefined => MARKER.exec(r.allUserText)?.[0];
// The reviewer's prompt carries the plan's implementation section: the marker goes there.
const plan = (i: number) => `# Plan lane-${i + 1}\n\n## Implementation plan\n\n1. Keep notes of lane lane-${i + 1} in NOTES.md (marker LANE-${i + 1}).\n\n## Review record\n\nNothing yet.\n`;
/**
 * When each outside attempt's provider was spawned (its child record's wall-clock spawn
 * time), and when each rate-limited outside call was journaled, in a crew's store.
 */
function outsideJournal(state: string): { dispatched: number[]; limitedAt: number[] } {
  const store = openStore(state, { readOnly: true });
  const dispatched: number[] = [];
  const limitedAt: number[] = [];
  for (const { key, value } of store.runs.getRange({})) {
    for (const attempt of Object.values(value.attempts)) {
      if (attempt.voice === 'outside' && attempt.child != null) dispatched.push(Date.parse(attempt.child.at));
    }
    for (const event of readJournal(store, key)) {
      if (event['voice'] === 'outside' && event.type === 'attempt_outcome' && event['code'] === 'PROVIDER_RATE_LIMITED') limitedAt.push(Date.parse(event.at));
    }
  }
  return { dispatched, limitedAt };
}
const byLane = (stdout: string) => Object.fromEntries(laneLines(stdout).map((l) => [l['lane']!, l]));

describe('a 429 on one provider across a crew of eight lanes', () => {
  test('the lanes whose codex call met the 429 fail typed and are not replayed; the others call codex only after retry-after; --retry-failed completes them', async () => {
    const dir = join(root, 'crew429');
    const repo = gitRepo(join(dir, 'repo'));
    // codex (the outside reviewer) is rate limited: every lane whose first codex request
    // arrives before any codex call has retried (so before the crew can know of the
    // limit) gets 429 with retry-after 3 s on each request of that first call (codex
    // retries once by itself); later calls are served. claude is healthy.
    const limited = new Set<string>();
    const seen = new Map<string, number>();
    let retried = false;
    server.setScript((r) => {
      const lane = r.api === 'openai' ? markerOf(r) : undefined;
      if (lane !== undefined) {
        const n = (seen.get(lane) ?? 0) + 1;
        seen.set(lane, n);
        if (n > 1) retried = true;
        else if (!retried) limited.add(lane);
        if (limited.has(lane) && n <= 2) return httpError(429, { retryAfterS: 3 });
      }
      return crewReply(r, 1);
    });
    const from = server.requests.length;
    const crew = realCrew(dir, server.url, {
      crew: 'limited',
      lanes: 8,
      roles: { native: 'claude-code', outside: 'codex', observer: 'claude-code', agent: 'claude-code' },
      workspace: repo,
      retries: 1,
      planText: plan,
    });
    const report = join(dir, 'report.json');
    const ran = await lanewardAsync(['crew', 'run', crew.file, '--state', crew.state, '--report', report], { cwd: dir, timeoutMs: 400_000 }).done;
    const out = ran.stdout + ran.stderr;
    const lanes = byLane(ran.stdout);
    const codex = server.requests.slice(from).filter((q) => q.api === 'openai' && q.model !== undefined && markerOf(q.model) !== undefined);
    const laneOf = (q: (typeof codex)[number]) => `lane-${MARKER.exec(q.model!.allUserText)![1]}`;
    const phaseOf = (q: (typeof codex)[number]) => /^# Review: (\S+) phase/m.exec(q.model!.allUserText)?.[1] ?? '?';
    const limitedLanes = [...limited].map((m) => `lane-${m.slice(5)}`).sort();
    expect(limitedLanes.length, out).toBeGreaterThanOrEqual(1);
    expect(limitedLanes.length, out).toBeLessThanOrEqual(4);
    for (const [id, line] of Object.entries(lanes)) {
      if (limitedLanes.includes(id)) {
        expect(`${id} ${line['status']} ${line['code']}`, out).toBe(`${id} failed PROVIDER_RATE_LIMITED`);
        // Each codex call (one per phase that reached its outside voice) is two requests,
        // codex's own retry, and is never replayed by laneward.
        const calls = new Map<string, number>();
        for (const q of codex.filter((c) => laneOf(c) === id)) calls.set(phaseOf(q), (calls.get(phaseOf(q)) ?? 0) + 1);
        const first = phaseOf(codex.find((c) => laneOf(c) === id)!);
        expect(calls.get(first), `${id} ${JSON.stringify([...calls])}`).toBe(2);
        expect([...calls.entries()].every(([phase, n]) => phase === first || n === 1), `${id} ${JSON.stringify([...calls])}`).toBe(true);
        expect(ran.stdout, out).toContain(`CREW_LANE: lane=${id} status=failed code=PROVIDER_RATE_LIMITED`);
        expect(ran.stdout.split('\n').find((l) => l.startsWith(`CREW_LANE: lane=${id} `)), out).toContain(`; retry: laneward crew run ${crew.file} --retry-failed --state ${crew.state}`);
      } else {
        expect(`${id} ${line['status']}`, out).toBe(`${id} complete`);
      }
    }
    expect(Object.keys(lanes).sort()).toEqual(Array.from({ length: 8 }, (_, i) => `lane-${i + 1}`).sort());
    expect(ran.code).not.toBe(0);
    // The first limited call ended after its last request; the crew paused codex 3 s from then.
    // Every codex call but the limited lanes' first ones started after the pause.
    const firstCalls = new Set(limitedLanes.map((id) => `${id} ${phaseOf(codex.find((q) => laneOf(q) === id)!)}`));
    const inFirst = codex.filter((q) => firstCalls.has(`${laneOf(q)} ${phaseOf(q)}`));
    const limitedEnds = limitedLanes.map((id) => Math.max(...inFirst.filter((q) => laneOf(q) === id).map((q) => q.time)));
    const pauseFrom = Math.min(...limitedEnds);
    const first429 = Math.min(...inFirst.map((q) => q.time));
    const others = codex.filter((q) => !firstCalls.has(`${laneOf(q)} ${phaseOf(q)}`));
    expect(new Set(others.map(laneOf)).size).toBeGreaterThanOrEqual(8 - limitedLanes.length);
    // What the gate promises, from the crew's store: no codex call is spawned from the moment
    // a call ended rate limited until its retry-after passed (a call admitted earlier and
    // still queued for its slot waits the pause out there). One spawned before that moment
    // was already out and may be served (its requests can arrive after the 429s, however
    // slowly codex starts under load).
    const { dispatched, limitedAt } = outsideJournal(crew.state);
    expect(limitedAt.length, out).toBe(limitedLanes.length);
    for (const at of limitedAt) {
      const inPause = dispatched.filter((d) => d >= at && d < at + 3_000 - 500);
      expect(inPause.map((d) => new Date(d).toISOString()), `${new Date(at).toISOString()} ${out}`).toEqual([]);
    }
    // Calls waited and then went out: every lane that was not limited got its codex calls.
    expect(dispatched.filter((d) => d >= Math.min(...limitedAt) + 3_000 - 500).length, out).toBeGreaterThanOrEqual(1);
    expect(Math.min(...others.map((q) => q.time)) - first429, out).toBeGreaterThanOrEqual(0);
    const json = JSON.parse(readFileSync(report, 'utf8'));
    expect(json.providers).toHaveLength(1);
    // One limited call per limited lane: its first.
    expect(json.providers[0]).toMatchObject({ provider: 'codex', rate_limits: limitedLanes.length });
    expect(Date.parse(json.providers[0].paused_until) - pauseFrom).toBeGreaterThanOrEqual(3_000 - 500);

    // The failed lanes' retry advice, as printed, runs them again as new attempts; codex is healthy now.
    server.setScript((r) => crewReply(r, 1));
    const again = await lanewardAsync(['crew', 'run', crew.file, '--retry-failed', '--state', crew.state], { cwd: dir, timeoutMs: 300_000 }).done;
    const after = byLane(again.stdout);
    for (const id of limitedLanes) {
      expect(`${id} ${after[id]?.['status']}`, again.stdout + again.stderr).toBe(`${id} complete`);
      expect(Number(after[id]!['attempts'])).toBeGreaterThan(Number(lanes[id]!['attempts']));
    }
    expect(again.code, again.stdout + again.stderr).toBe(0);
  }, 600_000);
});
