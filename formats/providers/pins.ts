import type { PresetName } from './names.ts';

/**
 * The agent CLIs laneward drives as provider presets, pinned exactly: a preset is tested
 * against one version, and a newer CLI may change the flags or output the preset relies on.
 * test/real-clis/package.json pins the same versions (test/providers-cli.test.ts checks).
 */
export interface ProviderPin {
  /** The preset's name, as `laneward providers` prints it. */
  readonly preset: PresetName;
  /** The npm package that ships the CLI. */
  readonly packageName: string;
  /** The program the package installs (node_modules/.bin/<binary>, or on PATH). */
  readonly binary: string;
  /** The exact version the preset is tested against. */
  readonly version: string;
  /**
   * The environment variables the CLI reads its API key from, the documented one first.
   * The key counts as set when any of them is non-empty.
   */
  readonly keyEnv: readonly string[];
  /**
   * The package's own install script (relative to its folder), run with node after an
   * install that ignored scripts, when the program does not run without it.
   */
  readonly postinstall?: string;
}

export type { PresetName };

/** The pin of one preset. */
export function pinOf(preset: PresetName): ProviderPin {
  return PROVIDER_PINS.find((pin) => pin.preset === preset)!;
}

export const PROVIDER_PINS: readonly ProviderPin[] = [
  // Installed with --ignore-scripts, claude-code's bin/claude.exe is a 500-byte stub that
  // prints "claude native binary not installed"; its install.cjs hard-links (or copies) the
  // native binary from the platform package npm already fetched, with no download.
  { preset: 'claude-code', packageName: '@anthropic-ai/claude-code', binary: 'claude', version: '2.1.328', keyEnv: ['ANTHROPIC_API_KEY'], postinstall: 'install.cjs' },
  // codex 0.169.0 takes its key from either (its binary lists OPENAI_API_KEY and
  // CODEX_API_KEY as the "supported auth env vars"; its errors say "set CODEX_API_KEY").
  { preset: 'codex', packageName: '@openai/codex', binary: 'codex', version: '0.169.0', keyEnv: ['OPENAI_API_KEY', 'CODEX_API_KEY'] },
  { preset: 'gemini-cli', packageName: '@google/gemini-cli', binary: 'gemini', version: '0.61.0', keyEnv: ['GEMINI_API_KEY'] },
];

/** Every key variable of every preset: none of them is passed to a `--version` probe. */
export const PROVIDER_KEY_ENV: readonly string[] = PROVIDER_PINS.flatMap((pin) => pin.keyEnv);

/** The npm spec that installs a pin: `<package>@<version>`. */
export function packageSpec(pin: ProviderPin): string {
  return `${pin.packageName}@${pin.version}`;
}
