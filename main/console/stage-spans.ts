import type { StageSpan } from '../../formats/console/lane-story.ts';
import { isTerminalStage, type LaneProgress } from '../../formats/crew/record.ts';

/**
 * The lane's stage history as spans: each stage ends where the next begins; the last is
 * open while the lane runs, and a terminal one ends where it began (the lane stopped there).
 * A lane saved before the history was kept has none: no span is made up from its last save.
 */
export function stageSpans(progress: Pick<LaneProgress, 'stage' | 'stages'>): StageSpan[] {
  const marks = progress.stages ?? [];
  const terminal = isTerminalStage(progress.stage);
  return marks.map((mark, i) => {
    const next = marks[i + 1];
    const endedAt = next !== undefined ? next.at : terminal ? mark.at : null;
    return { stage: mark.stage, startedAt: mark.at, endedAt, durationMs: endedAt === null ? null : spanMs(mark.at, endedAt) };
  });
}

function spanMs(from: string, to: string): number | null {
  const ms = Date.parse(to) - Date.parse(from);
  return Number.isFinite(ms) ? Math.max(0, ms) : null;
}
