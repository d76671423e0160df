import { PROGRESS_SOURCES, type ProgressSource } from '../../../formats/supervision/modes.ts';
import type { ProgressTracker } from './verdict.ts';
import { ClaudeStreamJsonTracker } from './claude-stream-json.ts';
import { CodexJsonTracker } from './codex-json.ts';
import { JsonlCounterTracker } from './jsonl-counter.ts';
import { StepLifecycleTracker } from './step-lifecycle.ts';
import { GeminiStreamJsonTracker } from './gemini-stream-json.ts';

export type { ProgressTracker, Verdict } from './verdict.ts';

/** The structured progress sources a lease descriptor may name: every source but fd 3. */
export type TrackerKind = Exclude<ProgressSource, 'fd' | 'preset'>;

/** Every {@link TrackerKind}, in the order the contract lists them. */
export const TRACKER_KINDS: readonly TrackerKind[] = Object.freeze(PROGRESS_SOURCES.filter((source): source is TrackerKind => source !== 'fd' && source !== 'preset'));

/** Creates a fresh tracker (empty identity sets, zero marks) of the given kind. */
export function createTracker(kind: TrackerKind): ProgressTracker {
  switch (kind) {
    case 'step-lifecycle':
      return new StepLifecycleTracker();
    case 'claude-stream-json':
      return new ClaudeStreamJsonTracker();
    case 'codex-json':
      return new CodexJsonTracker();
    case 'jsonl-counter':
      return new JsonlCounterTracker();
    case 'gemini-stream-json':
      return new GeminiStreamJsonTracker();
  }
  // Only reachable from untyped callers; the descriptor is validated before this point.
  throw new TypeError(`Expected a tracker kind (${TRACKER_KINDS.join(', ')}), got ${JSON.stringify(kind)}`);
}
