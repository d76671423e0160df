/** The agent CLIs laneward knows how to drive: a runner may name one instead of an argv. */
export const PRESET_NAMES = ['claude-code', 'codex', 'gemini-cli'] as const;
export type PresetName = (typeof PRESET_NAMES)[number];

export function isPresetName(value: unknown): value is PresetName {
  return (PRESET_NAMES as readonly unknown[]).includes(value);
}
