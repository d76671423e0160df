import { readFileSync } from 'node:fs';
import type { ProviderFacts } from '../../formats/providers/facts.ts';
import type { PresetName } from '../../formats/providers/names.ts';
import { createStreamReader } from '../../formats/providers/stream-reader.ts';

/**
 * What a preset's stream file says, read whole (its writer gone): its session, final text,
 * usage and cost, and whether it reached its terminal event. Null when there is no file.
 * Hint: the stream is bounded by the supervisor's stdout limit when it was written.
 */
export function streamFacts(preset: PresetName, file: string): ProviderFacts | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  const reader = createStreamReader(preset);
  for (const line of text.split('\n')) if (line !== '') reader.feed(line);
  return reader.facts();
}

/**
 * How a stream that reached its end ended: `done` when its terminal event came with no
 * error, the typed failure it reported, or null when it says nothing conclusive (no
 * terminal event: its outcome is unknown).
 */
export function streamEnd(facts: ProviderFacts | null): 'done' | 'PROVIDER_RATE_LIMITED' | 'CHILD_FAILED' | null {
  if (facts === null || !facts.finished) return null;
  if (facts.rateLimit !== null) return 'PROVIDER_RATE_LIMITED';
  return facts.apiError === null ? 'done' : 'CHILD_FAILED';
}
