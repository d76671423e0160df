import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import type { CrewSnapshot } from '../formats/console/snapshot.ts';
import type { LaneStory } from '../formats/console/lane-story.ts';
import { readPrivateKey } from '../main/actions/keys.ts';
import { signatureFileOf, signatureText } from '../main/actions/signature.ts';
import { writeDemoCrew } from '../main/demo/demo-crew.ts';
import { newLane } from '../formats/crew/record.ts';
import { laneLine } from '../main/cli/crew-lines.ts';
import { laneCost } from '../main/crew/lane-cost.ts';
import { reviewAttempts } from '../main/console/review-story.ts';
import type { JournalEvent, RunRecord } from '../formats/review/run-record.ts';
import { ensureBuilt, laneward, ROOT } from './helpers/cli.ts';
import { served } from './helpers/served.ts';
import { httpRequest } from './helpers/sse.ts';
import { tempRoot } from './helpers/tmp.ts';

// A supervised call whose result stood though it ended with a code (PROVIDER_NO_EXIT: the
// CLI wrote its result and did not exit) keeps that code wherever the crew tells of it:
// its lane's line, the report, crew status --lane and the console's pages.

const root = tempRoot('crew-typed-ends');
const LINGERS = join(ROOT, 'fixtures', 'providers', 'claude-lingers.mjs');

beforeAll(() => ensureBuilt());

/** One lane whose agent and observer are a claude-code that answers, then never exits. */
function lingeringCrew() {
  const dir = join(root, 'crew');
  const file = writeDemoCrew({ dir, crew: 'typed', lanes: 1, broken: 0, concurrency: 2, fixtures: join(ROOT, 'fixtures'), instant: true });
  const fd = { timeout_mode: 'admitted_progress_inactivity', progress: 'fd', cleanup_reserve_ms: 100, post_provider_ms: 2_000 };
  const preset = { timeout_mode: 'admitted_progress_inactivity', progress: 'preset', cleanup_reserve_ms: 100, post_provider_ms: 2_000, first_event_ms: 20_000, exit_after_terminal_ms: 300 };
  const actionsFile = join(dir, 'actions.json');
  const text = `${JSON.stringify({ schema_version: 1, actions: { review: fd, observe: preset, agent: preset } }, null, 2)}\n`;
  writeFileSync(actionsFile, text);
  writeFileSync(signatureFileOf(actionsFile), signatureText(Buffer.from(text), readPrivateKey(join(dir, 'keys', 'actions.key'))));
  const value = JSON.parse(readFileSync(file, 'utf8'));
  value.runners.agent = { preset: 'claude-code', bin: LINGERS };
  value.runners.observer = { preset: 'claude-code', bin: LINGERS };
  writeFileSync(file, JSON.stringify(value));
  return { dir, file, state: join(dir, 'state'), report: join(dir, 'report.json') };
}

describe('a crew whose calls end PROVIDER_NO_EXIT with their results standing', () => {
  const c = lingeringCrew();

  test('should complete, and name each such call in its lane line and its report', () => {
    const run = laneward(['crew', 'run', c.file, '--state', c.state, '--report', c.report], { cwd: c.dir, timeoutMs: 120_000 });
    expect([run.code, run.stderr]).toEqual([0, '']);
    const line = run.stdout.split('\n').find((l) => l.startsWith('CREW_LANE: '))!;
    expect(line).toMatch(/^CREW_LANE: lane=lane-1 status=complete attempts=\d+ turns=1 cost_usd=\S+ unpriced=\d+ run=\S+ call_codes=(\S+)$/);
    const codes = /call_codes=(\S+)$/.exec(line)![1]!.split(',');
    expect(codes).toContain('turn:1:PROVIDER_NO_EXIT');
    expect(codes).toContain('observer:1:PROVIDER_NO_EXIT');
    expect(codes.every((c) => /^(observer:\d+|turn:1):PROVIDER_NO_EXIT$/.test(c))).toBe(true);
    const report = JSON.parse(readFileSync(c.report, 'utf8')) as { lanes: { status: string; code: string | null; call_codes: { call: string; kind: string; code: string }[] }[] };
    expect(report.lanes[0]).toMatchObject({ status: 'complete', code: null });
    expect(report.lanes[0]!.call_codes.map((e) => `${e.call}:${e.code}`)).toEqual(codes);
    expect(report.lanes[0]!.call_codes).toContainEqual({ call: 'turn:1', kind: 'agent', code: 'PROVIDER_NO_EXIT' });
    expect(report.lanes[0]!.call_codes).toContainEqual({ call: 'observer:1', kind: 'observer', code: 'PROVIDER_NO_EXIT' });
  });

  test('should keep each code in the lane story: crew status --lane, its JSON and crew status --json', () => {
    const lines = laneward(['crew', 'status', c.file, '--state', c.state, '--lane', 'lane-1'], { cwd: c.dir }).stdout.split('\n');
    expect(lines.find((l) => l.startsWith('LANE_ATTEMPT: id=turn:1 '))).toMatch(/ kind=agent .* outcome=completed code=PROVIDER_NO_EXIT /);
    expect(lines.find((l) => l.startsWith('LANE_ATTEMPT: id=observer:1 '))).toMatch(/ kind=observer voice=bootstrap .* outcome=completed code=PROVIDER_NO_EXIT /);
    const story = JSON.parse(laneward(['crew', 'status', c.file, '--state', c.state, '--lane', 'lane-1', '--json'], { cwd: c.dir }).stdout) as LaneStory;
    expect(story.attempts.filter((a) => a.kind !== 'reviewer').every((a) => a.outcome === 'completed' && a.code === 'PROVIDER_NO_EXIT')).toBe(true);
    const snapshot = JSON.parse(laneward(['crew', 'status', c.file, '--state', c.state, '--json'], { cwd: c.dir }).stdout) as CrewSnapshot;
    expect(snapshot.lanes[0]!.calls).toContainEqual({ call: 'turn:1', kind: 'agent', code: 'PROVIDER_NO_EXIT' });
  });

  test('should show each code on the crew page and the lane page', async () => {
    const view = served(['crew', 'view', c.file, '--state', c.state, '--serve', '0'], c.dir);
    try {
      const url = await view.url;
      const body = (await httpRequest(url)).body;
      const page = body.slice(body.indexOf('<main'), body.indexOf('</main>'));
      expect(page).toContain('<span class="call-code" data-call="turn:1" data-code="PROVIDER_NO_EXIT">turn:1 PROVIDER_NO_EXIT</span>');
      const lane = (await httpRequest(`${url}lanes/lane-1`)).body;
      expect(lane).toMatch(/<td>turn:1<\/td><td>agent<\/td>(<td>[^<]*<\/td>){4}<td>PROVIDER_NO_EXIT<\/td>/);
    } finally {
      view.child.kill('SIGTERM');
      await view.exited;
    }
  });
});

describe('laneLine', () => {
  test('should name at most eight typed calls, then count the rest', () => {
    const lane = { ...newLane('c', 'l1', '/runs/l1', '2026-01-01T00:00:00.000Z'), stage: 'complete' as const };
    const calls = Array.from({ length: 10 }, (_, i) => ({ call: `turn:${i + 1}`, kind: 'agent' as const, code: 'PROVIDER_NO_EXIT' }));
    const cost = laneCost(lane, null);
    const line = laneLine(lane, 'retry', { cost, resume: 'resume', calls });
    expect(/ call_codes=(\S+)$/.exec(line)?.[1]?.split(',')).toEqual([...calls.slice(0, 8).map((c) => `${c.call}:PROVIDER_NO_EXIT`), '+2']);
    expect(laneLine(lane, 'retry', { cost, resume: 'resume' })).not.toContain('call_codes=');
  });
});

describe('reviewAttempts', () => {
  test('should keep the code of a bound attempt whose supervision ended PROVIDER_NO_EXIT', () => {
    const record = {
      run: 'r1',
      attempts: { 'r1-a1': { id: 'r1-a1', voice: 'native', phase: 'ceo', state: 'bound', bound: { model: 'm', usage_usd: 0.1, findings: 0 } } },
      past_gates: [],
      gate: null,
    } as unknown as RunRecord;
    const journal = [{ type: 'attempt_outcome', at: '2026-01-01T00:00:00.000Z', attempt: 'r1-a1', status: 'failed', code: 'PROVIDER_NO_EXIT', marks: 3, duration_ms: 40, cleanup_confirmed: true }] as unknown as JournalEvent[];
    expect(reviewAttempts(record, journal)).toMatchObject([{ id: 'a1', kind: 'reviewer', outcome: 'completed', code: 'PROVIDER_NO_EXIT', cleanupConfirmed: true }]);
  });
});
