import type { ProgressSource } from '../supervision/modes.ts';
import { toolsByClass, type ToolClass, type ToolEventFormat } from '../supervision/tool-policy.ts';
import type { PresetName } from './names.ts';

/** What a call is for: a reviewer and an observer only read; an agent changes its worktree. */
export type CallRole = 'reviewer' | 'observer' | 'agent';

/** One call of a preset's CLI, as laneward asks for it. */
export interface PresetCall {
  readonly role: CallRole;
  readonly model: string;
  /** The provider session to continue (an agent's later turns), or null for a new one. */
  readonly resume: string | null;
  /** The tool classes the call may use (an observer's mode policy); null: the role's default. */
  readonly allow: readonly ToolClass[] | null;
  /**
   * Whether laneward's own sandbox (bubblewrap) holds the call: a CLI's own sandbox is then
   * turned off inside it, where it would only fail (codex's nests a bwrap of its own).
   */
  readonly contained?: boolean;
}

export interface Preset {
  readonly name: PresetName;
  /** The program's name on PATH and in node_modules/.bin. */
  readonly binary: string;
  readonly defaultModel: string;
  /** The tracker whose marks renew the lease: a signed action for this preset must name it. */
  readonly tracker: Exclude<ProgressSource, 'fd' | 'preset'>;
  /** How its stream names tools, for laneward's own TOOL_DENIED check; null when laneward cannot classify them. */
  readonly toolEvents: ToolEventFormat | null;
  /** The environment variable that holds its API key. */
  readonly keyVariable: string;
  /**
   * Whether a resumed session's stream reports the whole session's usage and cost (claude's
   * total_cost_usd, codex's thread usage), not only this call's: a turn's own share is the
   * difference from the session's previous figure.
   */
  readonly sessionTotals: boolean;
  /** Set for every call unless the runner's `env` sets it: what an unattended call wants. */
  readonly env: Readonly<Record<string, string>>;
  /** The preset's own arguments (the CLI's program path comes first, then these, then the runner's `args`). */
  args(call: PresetCall): string[];
}

/** What a role may do when no mode policy says more. */
const ROLE_CLASSES: Readonly<Record<CallRole, readonly ToolClass[]>> = {
  reviewer: ['read', 'search'],
  observer: ['read', 'search'],
  agent: ['read', 'search', 'shell', 'write', 'other'],
};

const classesOf = (call: PresetCall) => call.allow ?? ROLE_CLASSES[call.role];
const writes = (call: PresetCall) => classesOf(call).includes('write') || classesOf(call).includes('shell');

/**
 * Claude Code in print mode, prompt on stdin. `--include-partial-messages` frames every
 * model message (message and content-block starts and stops) so a long turn with no tool
 * call renews its lease; the tools come from the policy through --allowedTools and
 * --disallowedTools (its own enforcement; laneward's TOOL_DENIED stays behind it).
 */
const claudeCode: Preset = {
  name: 'claude-code',
  binary: 'claude',
  defaultModel: 'claude-sonnet-4-5',
  tracker: 'claude-stream-json',
  toolEvents: 'claude-stream-json',
  keyVariable: 'ANTHROPIC_API_KEY',
  // Telemetry, error reports and the updater off: an unattended lane makes no call but its model's.
  env: { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' },
  sessionTotals: true,
  args(call) {
    const { allowed, denied } = toolsByClass('claude-stream-json', classesOf(call));
    return [
      '-p',
      '--output-format', 'stream-json',
      '--verbose',
      '--include-partial-messages',
      '--model', call.model,
      ...(call.resume === null ? [] : ['--resume', call.resume]),
      '--permission-mode', writes(call) ? 'acceptEdits' : 'default',
      ...(allowed.length === 0 ? [] : ['--allowedTools', allowed.join(',')]),
      ...(denied.length === 0 ? [] : ['--disallowedTools', denied.join(',')]),
    ];
  },
};

/**
 * `codex exec --json`, prompt on stdin (`-`; its stdin is a file, so it ends). A call that
 * only reads runs in the read-only sandbox, an agent in workspace-write; approvals never.
 * A call laneward's sandbox holds runs with codex's own off (danger-full-access): codex
 * 0.169.0's sandbox runs the bwrap on PATH and, inside ours or with its home under /tmp
 * (where it refuses to make its helper's alias), every command fails
 * (`bwrap: execvp codex-linux-sandbox`) while the turn still ends well.
 */
const codex: Preset = {
  name: 'codex',
  binary: 'codex',
  defaultModel: 'gpt-5.5',
  tracker: 'codex-json',
  toolEvents: 'codex-json',
  keyVariable: 'OPENAI_API_KEY',
  env: {},
  sessionTotals: true,
  args(call) {
    // As config overrides: `exec resume` takes no --sandbox flag (0.169.0), and -c works for both.
    const common = ['--json', '--skip-git-repo-check', '-m', call.model, '-c', `sandbox_mode="${codexSandbox(call)}"`, '-c', 'approval_policy="never"'];
    return call.resume === null ? ['exec', ...common, '-'] : ['exec', 'resume', ...common, call.resume, '-'];
  },
};

function codexSandbox(call: PresetCall): string {
  if (call.contained === true) return 'danger-full-access';
  return writes(call) ? 'workspace-write' : 'read-only';
}

/**
 * Gemini CLI, prompt on stdin, stream-json. Without --yolo it offers no write or shell
 * tool at all, which is what a read-only call wants; an agent gets --yolo.
 */
const geminiCli: Preset = {
  name: 'gemini-cli',
  binary: 'gemini',
  defaultModel: 'gemini-2.5-pro',
  tracker: 'gemini-stream-json',
  toolEvents: null,
  keyVariable: 'GEMINI_API_KEY',
  // Unless told not to, gemini starts itself again as a child node with a larger heap: its
  // bundle loaded twice per call (1.8 s of CPU here against 1.0 s) and, between the
  // supervisor and the CLI, a wrapper that ignores SIGTERM. One process per call.
  env: { GEMINI_CLI_NO_RELAUNCH: '1' },
  sessionTotals: false,
  args(call) {
    return [
      '--output-format', 'stream-json',
      '-m', call.model,
      '--skip-trust',
      ...(writes(call) ? ['--yolo'] : []),
      ...(call.resume === null ? [] : ['--resume', call.resume]),
    ];
  },
};

export const PRESETS: Readonly<Record<PresetName, Preset>> = { 'claude-code': claudeCode, codex, 'gemini-cli': geminiCli };

/**
 * A signed action's progress source as one call reads it: `preset` is the tracker of the
 * preset the call runs, or null when it runs none (such a call is refused); any other
 * source is itself.
 */
export function progressFor(progress: ProgressSource | null, preset: PresetName | undefined): Exclude<ProgressSource, 'preset'> | null {
  if (progress !== 'preset') return progress;
  return preset === undefined ? null : PRESETS[preset].tracker;
}
