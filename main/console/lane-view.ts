import type { CallCode, LaneView } from '../../formats/console/snapshot.ts';
import { LANE_STAGES, type LaneProgress } from '../../formats/crew/record.ts';
import { oneLine } from '../../formats/text/one-line.ts';
import { laneAttention } from '../../formats/console/view.ts';
import type { SpendRecord } from '../../formats/review/run-record.ts';
import { laneCost } from '../crew/lane-cost.ts';

/** Typed call ends a lane lists on the crew page; its page (`/lanes/<id>`) has them all. */
const CALLS_SHOWN = 16;

/** A failure's detail as the crew page lists it; the lane's page has the whole story. */
const DETAIL_CHARS = 240;

/**
 * One lane as the console lists it, from its saved progress: the live view and the view
 * of a store read by another process make it the same way, so both show the same page.
 * `review` is its review run's ledger (null: no run yet); `markAt` the last admitted mark of one of its
 * children this process saw (ISO), if any.
 */
export function laneViewOf(progress: LaneProgress, review: Pick<SpendRecord, 'spent' | 'unknown_n'> | null, markAt?: string, calls: readonly CallCode[] = [], title?: string): LaneView {
  const stages = progress.stages ?? [];
  const started = stages.find((mark) => mark.stage !== 'queued');
  const since = stages[stages.length - 1]?.at ?? progress.updatedAt;
  const activityAt = markAt !== undefined && markAt > progress.updatedAt ? markAt : progress.updatedAt;
  const cost = laneCost(progress, review);
  return {
    id: progress.lane,
    ...(title === undefined ? {} : { title }),
    state: progress.stage,
    attempts: progress.attempts,
    code: progress.code,
    detail: progress.detail === null ? null : bounded(oneLine(progress.detail)),
    costUsd: Math.round(cost.usd * 1e6) / 1e6,
    ...(cost.unpriced === 0 ? {} : { unpriced: cost.unpriced }),
    startedAt: progress.stage === 'queued' ? null : (started?.at ?? null),
    since,
    activityAt,
    ...(calls.length === 0 ? {} : { calls: calls.slice(0, CALLS_SHOWN) }),
    ...(progress.branch == null ? {} : { branch: progress.branch }),
    ...(progress.head == null ? {} : { head: progress.head }),
  };
}

/** A lane the crew has not started yet. */
export function queuedLane(id: string, title?: string): LaneView {
  return { id, ...(title === undefined ? {} : { title }), state: 'queued', attempts: 0, code: null, detail: null, costUsd: 0, startedAt: null };
}

/** Lanes by state, every stage named in its fixed order (zero counts too), then any other state seen. */
export function countByState(lanes: readonly LaneView[]): Record<string, number> {
  const counts: Record<string, number> = Object.fromEntries(LANE_STAGES.map((stage) => [stage, 0]));
  for (const lane of lanes) counts[lane.state] = (counts[lane.state] ?? 0) + 1;
  return counts;
}

/** The crew's pace, spend and cap from its lanes at `nowMs`. */
export function crewFigures(
  lanes: readonly LaneView[],
  options: {
    readonly startedAt: string | null;
    readonly nowMs: number;
    readonly capUsd: number | null;
    readonly reserveUsd?: number | undefined;
    /** The stuck threshold of a crew that runs: given, a stuck lane makes the ETA unknown. */
    readonly stuckAfterS?: number | undefined;
  },
): { lanesPerMinute: number | null; etaS: number | null; spend: { usd: number; capUsd: number | null; unpriced: number; reserveUsd?: number } } {
  const from = options.startedAt === null ? Number.NaN : Date.parse(options.startedAt);
  // Lanes that ended in this run of the crew: a crew started again is not credited with
  // earlier ends. An interrupted lane has not ended: it is left for the crew to continue.
  const finished = (lane: LaneView) => lane.state === 'complete' || lane.state === 'failed';
  const ended = lanes.filter((lane) => finished(lane) && lane.since !== undefined && Date.parse(lane.since) >= from).length;
  // The ETA counts the lanes that still run: queued or in a running stage. A lane waiting for
  // its owner or interrupted moves at no pace; a stuck lane holds the crew for as long as it
  // stays quiet, which no rate tells: while one is, the ETA is unknown, not "1 s".
  const unended = lanes.filter((lane) => !finished(lane)).length;
  const open = lanes.filter((lane) => !finished(lane) && lane.state !== 'interrupted').length;
  const head = { now: new Date(options.nowMs).toISOString(), stuckAfterS: options.stuckAfterS ?? Infinity };
  const held = options.stuckAfterS !== undefined && lanes.some((lane) => laneAttention(lane, head) === 'stuck');
  const minutes = (options.nowMs - from) / 60_000;
  const lanesPerMinute = ended > 0 && minutes > 0 ? ended / minutes : null;
  const usd = lanes.reduce((sum, lane) => sum + (lane.costUsd ?? 0), 0);
  const unpriced = lanes.reduce((sum, lane) => sum + (lane.unpriced ?? 0), 0);
  return {
    lanesPerMinute: lanesPerMinute === null ? null : Math.round(lanesPerMinute * 100) / 100,
    etaS: unended === 0 ? 0 : held || open === 0 || lanesPerMinute === null ? null : Math.round((open / lanesPerMinute) * 60),
    // The cap is the crew's, over all its lanes: shown as the crew file says it.
    spend: { usd: Math.round(usd * 1e6) / 1e6, capUsd: options.capUsd, unpriced, ...(options.reserveUsd === undefined ? {} : { reserveUsd: options.reserveUsd }) },
  };
}

function bounded(text: string): string {
  return text.length <= DETAIL_CHARS ? text : `${text.slice(0, DETAIL_CHARS - 1)}…`;
}
