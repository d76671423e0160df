import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { readPrivateKey } from '../main/actions/keys.ts';
import { signatureFileOf, signatureText } from '../main/actions/signature.ts';
import { writeDemoCrew } from '../main/demo/demo-crew.ts';
import { ensureBuilt, laneward, ROOT } from './helpers/cli.ts';
import { killStrays } from './helpers/procs.ts';
import { tempRoot } from './helpers/tmp.ts';

// A crew whose preset CLI never starts (it cannot reach its model, say) ends the call
// PROVIDER_NO_START within the runner's first_event_ms, written in the crew file, not after
// the whole lease; and its fix names that field. A wrong action name or trust path names
// the crew file's field too, never the descriptor's signature.

const root = tempRoot('crew-provider-start');
beforeAll(() => ensureBuilt());
afterEach(() => {
  expect(killStrays(root)).toEqual([]);
});

let serial = 0;
function crew(edit: (value: Record<string, any>, dir: string) => void) {
  const dir = join(root, `c${++serial}`);
  const file = writeDemoCrew({ dir, crew: `c${serial}`, lanes: 1, broken: 0, concurrency: 2, fixtures: join(ROOT, 'fixtures'), instant: true });
  const value = JSON.parse(readFileSync(file, 'utf8'));
  edit(value, dir);
  writeFileSync(file, JSON.stringify(value));
  return { dir, file, state: join(dir, 'state') };
}

describe('crew run: a preset that never starts', () => {
  test('should end its call PROVIDER_NO_START after the runner\'s first_event_ms, not the lease', () => {
    const c = crew((value, dir) => {
      const silent = join(dir, 'silent-claude');
      // A CLI that starts and never writes an event: what an unreachable model looks like.
      writeFileSync(silent, '#!/usr/bin/env node\nsetTimeout(() => {}, 600_000);\n');
      chmodSync(silent, 0o755);
      const preset = { timeout_mode: 'admitted_progress_inactivity', progress: 'preset', cleanup_reserve_ms: 100, post_provider_ms: 2_000 };
      const fd = { timeout_mode: 'admitted_progress_inactivity', progress: 'fd', cleanup_reserve_ms: 100, post_provider_ms: 2_000 };
      const actionsFile = join(dir, 'actions.json');
      const text = `${JSON.stringify({ schema_version: 1, actions: { review: fd, observe: preset, agent: fd } }, null, 2)}\n`;
      writeFileSync(actionsFile, text);
      writeFileSync(signatureFileOf(actionsFile), signatureText(Buffer.from(text), readPrivateKey(join(dir, 'keys', 'actions.key'))));
      value.runners.observer = { preset: 'claude-code', bin: silent, first_event_ms: 1_500 };
      // The lease the call would otherwise wait out: longer than this test may take.
      value.limits.timeout_ms = 600_000;
    });
    const started = Date.now();
    const report = join(c.dir, 'report.json');
    const run = laneward(['crew', 'run', c.file, '--state', c.state, '--report', report], { cwd: c.dir, timeoutMs: 240_000 });
    expect(run.timedOut ?? false).toBe(false);
    expect([run.code, run.stderr]).toEqual([1, expect.anything()]);
    const line = run.stdout.split('\n').find((l) => l.startsWith('CREW_LANE: '))!;
    expect(line).toMatch(/^CREW_LANE: lane=lane-1 status=failed code=\S+ .*call_codes=observer:1:PROVIDER_NO_START/);
    expect(Date.now() - started).toBeLessThan(120_000);
    const lanes = (JSON.parse(readFileSync(report, 'utf8')) as { lanes: { call_codes: { call: string; code: string }[] }[] }).lanes;
    expect(lanes[0]!.call_codes).toContainEqual(expect.objectContaining({ call: 'observer:1', code: 'PROVIDER_NO_START' }));
  });
});

describe('crew run: the actions the crew file names', () => {
  test.each([
    ['an action name the descriptor lacks', (value: Record<string, any>) => void (value.actions.agent = 'agnet'), 'ACTION_UNKNOWN', /\(actions\.agent: no action named "agnet" in the descriptor, which lists "review", "observe", "agent" at \S+actions\.json\); fix: name one of the actions the message lists .* the crew file's actions\.reviewer, actions\.observer or actions\.agent, or --action \(ACTION_UNKNOWN\)$/],
    ['a trust path with no key', (value: Record<string, any>) => void (value.actions.trust = 'keys/nope.pub'), 'TRUST_KEY_UNUSABLE', /\(actions\.trust: the trusted public key is unusable: .* at \S+nope\.pub\); fix: point the crew file's actions\.trust \(or --trust\) at the actions\.pub .*\(TRUST_KEY_UNUSABLE\)$/],
  ])('should refuse %s naming the field (exit 3), starting nothing', (_what, edit, code, line) => {
    const c = crew(edit);
    const run = laneward(['crew', 'run', c.file, '--state', c.state], { cwd: c.dir });
    expect(run.code).toBe(3);
    const lines = run.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(line);
    expect(lines[0]!.endsWith(`(${code})`)).toBe(true);
    expect(run.stdout).toBe('');
    const json = laneward(['crew', 'run', c.file, '--state', c.state, '--json'], { cwd: c.dir });
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, code, fix: expect.stringContaining("the crew file's actions.") });
  });

  test('should point a flag crew run lacks at crew run --help, with no placeholder', () => {
    const c = crew(() => {});
    const run = laneward(['crew', 'run', c.file, '--timeout-ms', '5'], { cwd: c.dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^laneward crew run: .*Unknown option '--timeout-ms'.*; fix: use only the options and arguments laneward crew run --help lists \(USAGE\)\n$/);
  });
});
