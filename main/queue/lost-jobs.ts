import type { Redis } from 'ioredis';
import type { LaneSpec } from '../../formats/crew/file.ts';
import type { CrewOutput } from '../crew/crew-session.ts';
import { laneJobId, LANE_QUEUE } from './lane-job.ts';

/**
 * Redis losing its data (FLUSHALL, a restart without persistence, jobs removed by hand)
 * loses the jobs and no event says so: a job Redis no longer holds is noticed within
 * `everyMs`, and queued again from this coordinator's copy. Returns the stop.
 */
export function watchLostJobs(w: { redis: Redis; runAs: string; open: () => LaneSpec[]; signal: AbortSignal; enqueue: (lane: string) => Promise<number>; everyMs: number; io: CrewOutput }): () => void {
  let checking = false;
  const timer = setInterval(() => {
    if (checking || w.signal.aborted) return;
    const open = w.open();
    if (open.length === 0) return;
    checking = true;
    void (async () => {
      const pipeline = w.redis.pipeline();
      for (const lane of open) pipeline.exists(`bull:${LANE_QUEUE}:${laneJobId(w.runAs, lane.id)}`);
      const replies = (await pipeline.exec()) ?? [];
      for (const [i, lane] of open.entries()) {
        if (replies[i]?.[1] !== 0 || w.open().every((l) => l.id !== lane.id) || w.signal.aborted) continue;
        const put = await w.enqueue(lane.id);
        w.io.event({ type: 'requeued', lane: lane.id, records: put });
      }
    })()
      .catch(() => undefined)
      .finally(() => (checking = false));
  }, w.everyMs);
  return () => clearInterval(timer);
}
