import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * What each real agent CLI needs to talk to a fake model server at a base URL: the argv
 * after its binary, the env, and the files to write first. Everything lives under a
 * private directory (HOME and config), the key is fake, the prompt comes on stdin, the
 * output is stream JSON, tools run without asking, and nothing reaches for the network:
 * each setting below was found necessary by watching the CLI's DNS lookups with no network
 * (docs/providers.md).
 */

export type Cli = 'claude-code' | 'codex' | 'gemini-cli';

export interface ClientOptions {
  /** The fake server, `http://127.0.0.1:PORT`, no trailing slash. */
  readonly baseUrl: string;
  /** A private directory for this client's HOME and config; it must exist or be creatable. */
  readonly dir: string;
  /** Model name; each CLI has a default it knows the price or metadata of. */
  readonly model?: string;
  /** A session id from an earlier run's stream, to continue that conversation. */
  readonly resume?: string;
  /**
   * How many times the CLI itself retries a failed model request (429, 5xx) before it
   * gives up; each CLI's own default when absent (claude 10, codex 5 reconnects of 5
   * requests each, gemini 10 attempts). Gemini cannot go below one retry.
   */
  readonly retries?: number;
  /** claude only: also emit the raw stream events (`stream_event` lines). */
  readonly partialMessages?: boolean;
}

export interface ClientFile {
  readonly path: string;
  readonly content: string;
}

export interface ClientSetup {
  readonly argv: readonly string[];
  /** Set over a minimal environment (PATH); see `scrubbedEnv`. */
  readonly env: Readonly<Record<string, string>>;
  readonly files: readonly ClientFile[];
  /** Directories to create besides the files' own (gemini's private TMPDIR). */
  readonly dirs: readonly string[];
}

export const DEFAULT_MODELS: Readonly<Record<Cli, string>> = {
  // A model claude prices (so total_cost_usd is not zero): $3 / $15 per million tokens.
  'claude-code': 'claude-sonnet-4-5',
  // A model codex 0.169.0 ships metadata for; others get a warning item in the stream.
  codex: 'gpt-5.5',
  'gemini-cli': 'gemini-2.5-flash',
};

/** The fake key every client sends; the server does not check it. */
export const FAKE_KEY = 'fake-key-for-the-model-server';

/**
 * Inherited variables that would point a CLI elsewhere or at other credentials, or make
 * it look for an IDE; a caller that passes its own environment through drops these.
 */
export const SCRUBBED_ENV: readonly string[] = [
  'ANTHROPIC_AUTH_TOKEN',
  'ANTHROPIC_MODEL',
  'ANTHROPIC_SMALL_FAST_MODEL',
  'CLAUDE_CONFIG_DIR',
  'CLAUDE_CODE_USE_BEDROCK',
  'CLAUDE_CODE_USE_VERTEX',
  'CLAUDE_CODE_SSE_PORT',
  'CLAUDE_CODE_ENTRYPOINT',
  'CLAUDECODE',
  'OPENAI_API_KEY',
  'OPENAI_BASE_URL',
  'CODEX_HOME',
  'CODEX_SANDBOX',
  'GOOGLE_API_KEY',
  'GOOGLE_GENAI_USE_VERTEXAI',
  'GOOGLE_GENAI_USE_GCA',
  'GOOGLE_CLOUD_PROJECT',
  'GOOGLE_APPLICATION_CREDENTIALS',
  'GEMINI_MODEL',
  'GEMINI_SYSTEM_MD',
  'TERM_PROGRAM',
];

/** The process environment without `SCRUBBED_ENV`, with `setup.env` over it. */
export function scrubbedEnv(setup: ClientSetup, base: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined && !SCRUBBED_ENV.includes(k)) env[k] = v;
  return { ...env, ...setup.env };
}

function isRoot(): boolean {
  return process.getuid?.() === 0;
}

function claude(o: ClientOptions): ClientSetup {
  return {
    // `-p` with no prompt argument reads the prompt from stdin; stream-json needs --verbose.
    argv: [
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--model',
      o.model ?? DEFAULT_MODELS['claude-code'],
      '--permission-mode',
      'bypassPermissions',
      ...(o.partialMessages ? ['--include-partial-messages'] : []),
      ...(o.resume ? ['--resume', o.resume] : []),
    ],
    env: {
      HOME: o.dir,
      ANTHROPIC_BASE_URL: o.baseUrl,
      ANTHROPIC_API_KEY: FAKE_KEY,
      // One switch for telemetry, error reporting, the auto-updater and the other lookups:
      // without it claude resolves api.anthropic.com several times per run.
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      // As root, bypassPermissions is refused ("cannot be used with root/sudo privileges")
      // unless the environment says it is a sandbox.
      ...(isRoot() ? { IS_SANDBOX: '1' } : {}),
      ...(o.retries === undefined ? {} : { CLAUDE_CODE_MAX_RETRIES: String(o.retries) }),
    },
    files: [],
    dirs: [],
  };
}

function codex(o: ClientOptions): ClientSetup {
  const home = join(o.dir, 'codex');
  const config = [
    `model = ${JSON.stringify(o.model ?? DEFAULT_MODELS.codex)}`,
    'model_provider = "fake"',
    // Only the TUI checks for updates, but a preset may run either.
    'check_for_update_on_startup = false',
    '',
    '[model_providers.fake]',
    'name = "fake"',
    `base_url = ${JSON.stringify(`${o.baseUrl}/v1`)}`,
    'env_key = "FAKE_MODEL_KEY"',
    'wire_api = "responses"',
    // Codex retries a failed request (5xx) inside each of its stream reconnects.
    ...(o.retries === undefined ? [] : [`request_max_retries = ${o.retries}`, `stream_max_retries = ${o.retries}`]),
    '',
    // Without this codex resolves ab.chatgpt.com (metrics) on every run.
    '[analytics]',
    'enabled = false',
    '',
    // Without this it resolves chatgpt.com and api.github.com (the curated plugin list).
    '[features]',
    'plugins = false',
    '',
  ].join('\n');
  const common = ['--json', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox'];
  return {
    // `-` reads the prompt from stdin; stdin must then reach EOF.
    argv: o.resume ? ['exec', 'resume', ...common, o.resume, '-'] : ['exec', ...common, '-'],
    env: { HOME: o.dir, CODEX_HOME: home, FAKE_MODEL_KEY: FAKE_KEY },
    files: [{ path: join(home, 'config.toml'), content: config }],
    dirs: [],
  };
}

function gemini(o: ClientOptions): ClientSetup {
  const settings = {
    // Without an auth type the CLI exits 41 asking to choose one.
    security: { auth: { selectedType: 'gemini-api-key' } },
    // Without this it resolves play.googleapis.com (usage statistics).
    privacy: { usageStatisticsEnabled: false },
    // Attempts, not retries; the CLI refuses fewer than two.
    ...(o.retries === undefined ? {} : { general: { maxAttempts: Math.max(2, o.retries + 1) } }),
  };
  return {
    // With no prompt argument and stdin not a TTY, the prompt is read from stdin.
    argv: [
      '--skip-trust',
      '-m',
      o.model ?? DEFAULT_MODELS['gemini-cli'],
      '--yolo',
      '--output-format',
      'stream-json',
      ...(o.resume ? ['--resume', o.resume] : []),
    ],
    env: {
      HOME: o.dir,
      GEMINI_CLI_HOME: o.dir,
      GEMINI_API_KEY: FAKE_KEY,
      GOOGLE_GEMINI_BASE_URL: o.baseUrl,
      // One process, not a wrapper that starts it again with a larger heap (as the preset does).
      GEMINI_CLI_NO_RELAUNCH: '1',
      // On an API error it writes a full report to the temp dir (/tmp/gemini-client-error-*.json):
      // kept in the private dir instead.
      TMPDIR: join(o.dir, 'tmp'),
    },
    files: [{ path: join(o.dir, '.gemini', 'settings.json'), content: `${JSON.stringify(settings, null, 2)}\n` }],
    dirs: [join(o.dir, 'tmp')],
  };
}

export function clientSetup(cli: Cli, options: ClientOptions): ClientSetup {
  switch (cli) {
    case 'claude-code':
      return claude(options);
    case 'codex':
      return codex(options);
    case 'gemini-cli':
      return gemini(options);
  }
}

/** Writes the setup's files (creating their directories) and the private HOME. */
export function writeClientFiles(setup: ClientSetup, dir: string): void {
  mkdirSync(dir, { recursive: true });
  for (const d of setup.dirs) mkdirSync(d, { recursive: true });
  for (const file of setup.files) {
    mkdirSync(dirname(file.path), { recursive: true });
    writeFileSync(file.path, file.content);
  }
}
