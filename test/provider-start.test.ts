import { describe, expect, test } from 'vitest';
import { RESULT_CODES } from '../formats/codes/codes.ts';
import { PRESET_FIRST_EVENT_MS } from '../formats/providers/runner.ts';
import type { RunnerConfig } from '../formats/providers/runner.ts';
import { specFrom } from '../main/lease/lease-options.ts';
import { launchOf, launchSpec } from '../main/providers/launch.ts';
import type { ActionSpec } from '../formats/schemas/actions.ts';

// A preset call that never writes its first event (a CLI that cannot reach its model)
// ends PROVIDER_NO_START within first_event_ms rather than holding its slot for the whole
// lease: the runner's value (the crew file's), else the signed action's, else the default.

const request = { file: 'a.json', trust: 'a.pub', action: 'agent', timeoutMs: 300_000, graceMs: 500, teardownMs: 5_000, stdoutLimit: 1024, stderrLimit: 1024 };
const action = (extra: Partial<ActionSpec> = {}): ActionSpec => ({ timeout_mode: 'admitted_progress_inactivity', progress: 'preset', cleanup_reserve_ms: 100, post_provider_ms: 1_000, ...extra }) as ActionSpec;
const call = { role: 'agent', prompt: '/p', result: '/r' } as const;

function firstEventMs(runner: RunnerConfig, signed: ActionSpec): number | undefined {
  const launch = launchOf(runner, call);
  return launchSpec(specFrom(signed, 'sha', request, launch.argv, 0), launch, {}).firstEventMs;
}

describe('launchSpec: the first-event budget of a call', () => {
  test.each<[string, RunnerConfig, ActionSpec, number | undefined]>([
    ['a preset under an action that names none: the preset default', { preset: 'codex' }, action(), PRESET_FIRST_EVENT_MS],
    ['a preset under an action that names one: the action\'s', { preset: 'codex' }, action({ first_event_ms: 20_000 }), 20_000],
    ['a preset whose runner names one: the runner\'s, over the action\'s', { preset: 'claude-code', first_event_ms: 1_500 }, action({ first_event_ms: 20_000 }), 1_500],
    ['an argv runner under an action that names none: none (it may never print JSON)', ['node', 'x.mjs'], action({ progress: 'fd' } as Partial<ActionSpec>), undefined],
    ['an argv runner under an action that names one: the action\'s', ['node', 'x.mjs'], action({ progress: 'fd', first_event_ms: 9_000 } as Partial<ActionSpec>), 9_000],
  ])('%s', (_what, runner, signed, want) => {
    expect(firstEventMs(runner, signed)).toBe(want);
  });

  test('should give the default the PROVIDER_NO_START fix names, well under a crew call\'s default lease (120 s)', () => {
    expect(RESULT_CODES.PROVIDER_NO_START.fix).toContain(`${PRESET_FIRST_EVENT_MS} by default`);
    expect(PRESET_FIRST_EVENT_MS).toBeLessThan(120_000);
  });
});
