import { join } from 'node:path';
import type { PresetName } from '../../formats/providers/names.ts';
import { progressFor } from '../../formats/providers/presets.ts';
import { isToolEventFormat } from '../../formats/supervision/tool-policy.ts';
import { LanewardError } from '../../formats/codes/error.ts';
import { DEFAULT_MODELS } from '../model-server/clients.ts';

/** `fixtures`: laneward's own fixture reviewers, observer and agent; else presets, in the order given. */
export type InitProviders = 'fixtures' | readonly PresetName[];

export interface InitSpec {
  readonly crew: string;
  /** The repository, as the crew file names it (relative to the crew's directory). */
  readonly repo: string;
  readonly tasks: readonly string[];
  readonly providers: InitProviders;
  /** Absolute: laneward's fixtures directory, for `fixtures`. */
  readonly fixtures: string;
  /** Absolute: the node that runs the fixtures. */
  readonly node: string;
}

/** One file init writes, by its path inside the crew's directory. */
export interface InitFile {
  readonly path: string;
  readonly content: string;
  readonly mode: number;
}

export interface InitKeys {
  readonly privatePem: string;
  readonly publicPem: string;
  /** The .sig text of the given bytes under the private key. */
  sign(bytes: Uint8Array): string;
}

/** USD per million tokens of the presets' default models whose CLIs report tokens, not dollars (claude reports its own cost). */
const DEFAULT_PRICES: Readonly<Record<string, { input: number; output: number; cached_input: number }>> = {
  'gpt-5.5': { input: 1.25, output: 10, cached_input: 0.125 },
  'gemini-2.5-flash': { input: 0.3, output: 2.5, cached_input: 0.075 },
};

/** Lane ids in task order, padded so they sort as the tasks do. */
export function laneIds(count: number): string[] {
  const width = String(count).length;
  return Array.from({ length: count }, (_, i) => `task-${String(i + 1).padStart(width, '0')}`);
}

/**
 * A plan with the two headings a review run needs and the task's own words. A task that
 * begins with `#` is escaped, so it cannot become a heading of its own.
 */
export function planText(task: string): string {
  const words = task.startsWith('#') ? `\\${task}` : task;
  return `# ${words}\n\n## Implementation plan\n\n${words}\n\n## Review record\n\nNothing yet.\n`;
}

const presetLease = { timeout_mode: 'admitted_progress_inactivity', progress: 'preset', cleanup_reserve_ms: 100, post_provider_ms: 5_000, first_event_ms: 60_000, exit_after_terminal_ms: 10_000 };
const fixtureLease = (progress: string) => ({ timeout_mode: 'admitted_progress_inactivity', progress, cleanup_reserve_ms: 100, post_provider_ms: 2_000 });

function actionsOf(providers: InitProviders): object {
  if (providers === 'fixtures') return { review: fixtureLease('fd'), observe: fixtureLease('claude-stream-json'), agent: fixtureLease('fd') };
  return { review: presetLease, observe: presetLease, agent: presetLease };
}

function presetRunner(preset: PresetName): object {
  return { preset, model: DEFAULT_MODELS[preset] };
}

/**
 * The first preset that can observe: the QA observer's tool policy is enforced from the
 * tool events of its stream, which only some presets' streams name (gemini-cli's do not:
 * QA_POLICY_UNENFORCEABLE). Null when none of them can.
 */
export function observerPreset(presets: readonly PresetName[]): PresetName | null {
  return presets.find((preset) => isToolEventFormat(progressFor('preset', preset))) ?? null;
}

/**
 * The roles and lanes: with presets the first reviews natively, the first that can observes, the second
 * (else the first) reviews from outside, and agents take the presets in turn by lane;
 * with fixtures, laneward's healthy fixtures everywhere.
 */
function runnersOf(spec: InitSpec, ids: readonly string[]) {
  if (spec.providers === 'fixtures') {
    const f = (...parts: string[]) => join(spec.fixtures, ...parts);
    const runners = {
      native: [spec.node, f('reviewers', 'reviewer.mjs'), '--variant', 'healthy', '{prompt}', '{result}'],
      outside: [spec.node, f('reviewers', 'reviewer.mjs'), '--variant', 'healthy', '{prompt}', '{result}'],
      observer: [spec.node, f('observers', 'pass.mjs'), '{prompt}', '{result}'],
      agent: [spec.node, f('agents', 'agent.mjs'), '{prompt}', '{result}', 'healthy', '3'],
    };
    return { models: { native: 'claude-fixture', outside: 'gpt-fixture' }, runners, lanes: ids.map((id) => ({ id, plan: `plans/${id}.md` })) };
  }
  const presets = spec.providers;
  const first = presets[0]!;
  const second = presets[1] ?? first;
  const observer = observerPreset(presets);
  if (observer === null) throw new LanewardError('USAGE', `--providers ${presets.join(',')}: none of them can be the QA observer (claude-code or codex: their streams name the tools the observer's policy limits)`);
  const runners = { native: presetRunner(first), outside: presetRunner(second), observer: presetRunner(observer), agent: presetRunner(first) };
  const lanes = ids.map((id, i) => {
    const agent = presets[i % presets.length]!;
    return { id, plan: `plans/${id}.md`, ...(agent === first ? {} : { runners: { agent: presetRunner(agent) } }) };
  });
  const prices = Object.fromEntries(presets.map((p) => DEFAULT_MODELS[p]).filter((m) => DEFAULT_PRICES[m] !== undefined).map((m) => [m, DEFAULT_PRICES[m]]));
  return { models: { native: DEFAULT_MODELS[first], outside: DEFAULT_MODELS[second] }, runners, lanes, ...(Object.keys(prices).length === 0 ? {} : { prices }) };
}

/**
 * Every file of a ready crew, by path inside its directory: the key pair, the three
 * actions signed with it, one plan per task and crew.json (written last by the caller,
 * so a crew file always names files that exist).
 */
export function crewFiles(spec: InitSpec, keys: InitKeys): InitFile[] {
  const ids = laneIds(spec.tasks.length);
  const actions = `${JSON.stringify({ schema_version: 1, actions: actionsOf(spec.providers) }, null, 2)}\n`;
  const { models, runners, lanes, ...rest } = runnersOf(spec, ids);
  const crew = {
    schema_version: 1,
    crew: spec.crew,
    out: 'runs',
    actions: { file: 'actions.json', trust: 'keys/actions.pub', reviewer: 'review', observer: 'observe', agent: 'agent' },
    models,
    runners,
    ...rest,
    workspace: { repo: spec.repo },
    answer: 'as-is',
    limits: spec.providers === 'fixtures' ? { concurrency: 4, agent_turns: 6, timeout_ms: 30_000 } : { concurrency: 4, agent_turns: 6, timeout_ms: 300_000, spend_cap_usd: 20 },
    lanes,
  };
  return [
    { path: 'keys/actions.key', content: keys.privatePem, mode: 0o600 },
    { path: 'keys/actions.pub', content: keys.publicPem, mode: 0o644 },
    { path: 'actions.json', content: actions, mode: 0o644 },
    { path: 'actions.json.sig', content: keys.sign(Buffer.from(actions)), mode: 0o644 },
    ...ids.map((id, i) => ({ path: `plans/${id}.md`, content: planText(spec.tasks[i]!), mode: 0o644 })),
    { path: 'crew.json', content: `${JSON.stringify(crew, null, 2)}\n`, mode: 0o644 },
  ];
}
