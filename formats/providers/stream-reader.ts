import type { StreamReader } from './facts.ts';
import type { PresetName } from './names.ts';
import { claudeReader } from './stream-claude.ts';
import { codexReader } from './stream-codex.ts';
import { geminiReader } from './stream-gemini.ts';

/** A fresh reader of the stream the preset's CLI writes. */
export function createStreamReader(preset: PresetName): StreamReader {
  switch (preset) {
    case 'claude-code':
      return claudeReader();
    case 'codex':
      return codexReader();
    case 'gemini-cli':
      return geminiReader();
  }
}
