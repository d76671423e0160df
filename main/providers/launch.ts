import { existsSync, lstatSync } from 'node:fs';
import type { ProviderFacts } from '../../formats/providers/facts.ts';
import type { PresetName } from '../../formats/providers/names.ts';
import { PRESETS, type CallRole } from '../../formats/providers/presets.ts';
import { fillPlaceholders, isPresetRunner, PRESET_FIRST_EVENT_MS, type RunnerConfig } from '../../formats/providers/runner.ts';
import type { ToolClass } from '../../formats/supervision/tool-policy.ts';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import type { SupervisionSpec } from '../../workers/supervise/spec.ts';

/** What one call of a runner starts: the argv, the environment it adds, and where its prompt comes from. */
export interface Launch {
  readonly argv: string[];
  readonly env: Readonly<Record<string, string>>;
  /** The prompt file, read by the CLI on its stdin (a preset); undefined for an argv runner. */
  readonly stdinFile?: string;
  /** The preset whose stream the supervisor reads; undefined for an argv runner. */
  readonly provider?: PresetName;
  /** The model a preset was asked for; null for an argv runner. */
  readonly model: string | null;
  /** A preset's budget for its first structured event, as its runner gives it; undefined: the action's, else the preset default. */
  readonly firstEventMs?: number;
}

export interface LaunchCall {
  readonly role: CallRole;
  readonly prompt: string;
  readonly result: string;
  readonly lane?: string;
  /** The provider session to continue, for a preset. */
  readonly resume?: string | null;
  /** The tool classes the call may use (an observer's mode); default: the role's. */
  readonly allow?: readonly ToolClass[] | null;
  /** laneward's sandbox holds the call (a preset turns its CLI's own sandbox off inside it). */
  readonly contained?: boolean;
}

/**
 * One call of a runner: an argv template with its placeholders filled (inside each
 * element, never through a shell), or a preset's own argv with the prompt on stdin.
 * A preset's `bin` is its program, already resolved by whoever loaded the runner.
 */
export function launchOf(runner: RunnerConfig, call: LaunchCall): Launch {
  if (!isPresetRunner(runner)) {
    return { argv: fillPlaceholders(runner, { prompt: call.prompt, result: call.result, ...(call.lane === undefined ? {} : { lane: call.lane }) }), env: {}, model: null };
  }
  const preset = PRESETS[runner.preset];
  const model = runner.model ?? preset.defaultModel;
  const args = preset.args({ role: call.role, model, resume: call.resume ?? null, allow: call.allow ?? null, contained: call.contained === true });
  return {
    argv: [runner.bin ?? preset.binary, ...args, ...(runner.args ?? [])],
    env: { ...preset.env, ...(runner.env ?? {}) },
    stdinFile: call.prompt,
    provider: runner.preset,
    model,
    ...(runner.first_event_ms === undefined ? {} : { firstEventMs: runner.first_event_ms }),
  };
}

/**
 * The spec of one call of `launch` on `base` (the signed action's): the runner's env under
 * laneward's own variables, and for a preset its prompt on stdin, its stream read and a
 * budget for its first event (the runner's first_event_ms, else the action's, else
 * PRESET_FIRST_EVENT_MS): a CLI that cannot reach its model writes no event, and would
 * otherwise hold its slot for the whole lease.
 */
export function launchSpec(base: SupervisionSpec, launch: Launch, env: Readonly<Record<string, string>>): SupervisionSpec {
  return {
    ...base,
    env: { ...base.env, ...launch.env, ...env },
    ...(launch.stdinFile === undefined ? {} : { stdinFile: launch.stdinFile }),
    ...(launch.provider === undefined ? {} : { provider: launch.provider, firstEventMs: launch.firstEventMs ?? base.firstEventMs ?? PRESET_FIRST_EVENT_MS }),
    ...(launch.model === null ? {} : { model: launch.model }),
  };
}

/**
 * A preset's result: what the CLI wrote at `{result}` itself, else its final assistant
 * text, written there by laneward (atomically, never over a file or link the CLI made).
 * Returns what was done, for the caller's journal.
 */
export function settleResult(result: string, facts: ProviderFacts | null, extract: (text: string) => string = (t) => t): 'written-by-provider' | 'from-stream' | 'none' {
  if (existsSync(result) || lstatSync(result, { throwIfNoEntry: false }) !== undefined) return 'written-by-provider';
  const text = facts?.finalText;
  if (text === null || text === undefined || text.trim() === '') return 'none';
  writeFileAtomic(result, extract(text), 0o600, false);
  return 'from-stream';
}

/** The JSON document in a model's reply: the last ```json fence when there is one, else the whole text trimmed. */
export function jsonFromReply(text: string): string {
  const fences = [...text.matchAll(/```(?:json)?[ \t]*\n([\s\S]*?)\n```/g)];
  const last = fences.at(-1);
  return `${(last?.[1] ?? text).trim()}\n`;
}
