import type { LaneStory } from '../../formats/console/lane-story.ts';
import { oneLine } from '../../formats/text/one-line.ts';

const value = (v: string | number | boolean | null | undefined) => (v === null || v === undefined ? '-' : oneLine(String(v)));

/** One lane's story as `crew status --lane` prints it: one line per fact, key=value, `-` for none. */
export function laneLines(story: LaneStory): string[] {
  const lines = [
    `LANE: lane=${value(story.lane)} state=${story.state} code=${value(story.code)} cost_usd=${story.costUsd.toFixed(6)} run=${value(story.runDir)}${story.detail === null ? '' : ` detail=${value(story.detail)}`}`,
  ];
  for (const stage of story.stages) lines.push(`LANE_STAGE: stage=${stage.stage} started_at=${stage.startedAt} ended_at=${value(stage.endedAt)} duration_ms=${value(stage.durationMs)}`);
  for (const a of story.attempts) {
    lines.push(
      `LANE_ATTEMPT: id=${value(a.id)} kind=${a.kind} voice=${value(a.voice)} phase=${value(a.phase)} model=${value(a.model)} outcome=${value(a.outcome)} code=${value(a.code)} ` +
        `started_at=${value(a.startedAt)} duration_ms=${value(a.durationMs)} marks=${value(a.marks)} cleanup_confirmed=${value(a.cleanupConfirmed)} cost_usd=${value(a.costUsd)} session=${value(a.session)} ` +
        `exit=${value(a.exitCode)} signal=${value(a.signal)} stderr=${value(a.stderr?.at(-1))}`,
    );
  }
  for (const p of story.review.phases) lines.push(`LANE_PHASE: phase=${p.phase} state=${p.state} native=${p.native} outside=${p.outside} findings=${p.findings}`);
  const gate = story.review.gate;
  if (gate !== null) lines.push(`LANE_GATE: rev=${gate.rev} state=${gate.state} decisions=${gate.decisions} answer=${value(gate.answer)}`);
  for (const q of story.qa.verdicts) lines.push(`LANE_QA: call=${q.call} mode=${q.mode} verdict=${value(q.verdict)} code=${value(q.code)} at=${value(q.at)}`);
  if (story.workspace !== null) lines.push(`LANE_WORKSPACE: branch=${value(story.workspace.branch)} head=${value(story.workspace.head)} diff=${value(story.workspace.diffStat)}`);
  const failed = story.failedCall ?? null;
  if (failed !== null) lines.push(`LANE_CALL: call=${value(failed.call)} code=${value(failed.code)} exit=${value(failed.exitCode)} signal=${value(failed.signal)} stderr=${value(failed.stderr.at(-1))}`);
  const running = story.running ?? null;
  if (running !== null) lines.push(`LANE_RUNNING: call=${value(running.call)} pid=${running.pid} since=${value(running.since)} mode=${value(running.mode)} deadline_at=${value(running.deadlineAt)} last_mark_at=${value(running.lastMarkAt)} lease_deadline_at=${value(running.leaseDeadlineAt)}`);
  const owner = story.owner ?? null;
  if (owner !== null) lines.push(`LANE_OWNER: waiting for the owner brief=${value(owner.brief)} answer=${value(owner.answer)}`);
  if (story.fix !== null) lines.push(`LANE_FIX: ${oneLine(story.fix)}`);
  if (story.retry !== null) lines.push(`LANE_RETRY: ${oneLine(story.retry)}`);
  if (story.resume != null) lines.push(`LANE_RESUME: ${oneLine(story.resume)}`);
  return lines;
}
