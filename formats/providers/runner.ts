import * as v from 'valibot';
import { PRESET_NAMES, type PresetName } from './names.ts';

/** An argv template: `{prompt}`, `{result}` and `{lane}` are replaced inside each element, never by a shell. */
export const argvRunnerSchema = v.pipe(v.array(v.string()), v.minLength(1, 'Expected an argv array with the program first'));

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * A provider preset standing where an argv would: the CLI is driven non-interactively
 * with its prompt on stdin. `args` are appended to the preset's own; `env` is added to
 * the CLI's environment (the key and base URL, say); `bin` names the program when it is
 * not found on PATH or in node_modules; `first_event_ms` bounds its start.
 */
export const presetRunnerSchema = v.strictObject({
  preset: v.picklist(PRESET_NAMES, `Expected a preset: ${PRESET_NAMES.join(', ')}`),
  model: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200))),
  args: v.optional(v.array(v.string())),
  env: v.optional(
    v.pipe(
      v.record(v.pipe(v.string(), v.regex(ENV_NAME, 'Expected an environment variable name')), v.string()),
      v.check((env) => !Object.keys(env).some((k) => k.startsWith('LANEWARD_')), 'Expected no LANEWARD_ variable: laneward sets those'),
    ),
  ),
  bin: v.optional(v.pipe(v.string(), v.minLength(1))),
  /**
   * No structured event within this many ms of the spawn: PROVIDER_NO_START (a CLI that
   * cannot reach its model ends at once instead of waiting out its lease). Over the
   * signed action's first_event_ms; default {@link PRESET_FIRST_EVENT_MS}.
   */
  first_event_ms: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(2 ** 31 - 1))),
});

/** How long a preset call may go without its first structured event when neither the runner nor the action says. */
export const PRESET_FIRST_EVENT_MS = 60_000;

export const runnerSchema = v.union([argvRunnerSchema, presetRunnerSchema], 'Expected an argv array or a preset object ({"preset": ...})');

export type PresetRunner = v.InferOutput<typeof presetRunnerSchema>;
export type RunnerConfig = readonly string[] | PresetRunner;

export function isPresetRunner(runner: RunnerConfig): runner is PresetRunner {
  return !Array.isArray(runner);
}

/** The preset a runner names, or null for an argv. */
export function presetOf(runner: RunnerConfig): PresetName | null {
  return isPresetRunner(runner) ? runner.preset : null;
}

/** The placeholders an argv runner's words may hold. */
export type Placeholders = Readonly<Partial<Record<'prompt' | 'result' | 'lane', string>>>;

/**
 * Replaces each placeholder given inside every word, in one pass (a value that itself
 * reads `{result}` is not replaced again); a placeholder not given stays as written. The
 * words stay words: no shell ever sees them.
 */
export function fillPlaceholders(argv: readonly string[], values: Placeholders): string[] {
  return argv.map((word) => word.replace(/\{(prompt|result|lane)\}/g, (whole, key: keyof Placeholders) => values[key] ?? whole));
}

const perMillion = v.pipe(v.number(), v.finite(), v.minValue(0));

/** USD per million tokens by model, for presets whose stream reports tokens but no cost. */
export const pricesSchema = v.record(v.pipe(v.string(), v.minLength(1)), v.strictObject({ input: perMillion, output: perMillion, cached_input: v.optional(perMillion) }));
