import type { LaneSpec } from '../../formats/crew/file.ts';
import { isLanewardError } from '../../formats/codes/error.ts';
import { laneOrder, type LaneOrder } from '../../formats/crew/lane-order.ts';
import { sectionItems } from '../../formats/review/plan-doc.ts';
import { readPlanFile } from '../plan/plan-file.ts';

/**
 * The files a lane's plan names on its items' `Files:` lines, as its review run will read
 * them. A plan that cannot be read or lacks its sections names none here: its lane fails
 * typed at its review (PLAN_UNREADABLE, PLAN_SECTIONS_INVALID), and has nothing to order.
 */
export function lanePlanFiles(plan: string): string[] {
  try {
    return [...new Set(sectionItems(readPlanFile(plan).doc.implementation).files.flat())];
  } catch (error) {
    if (isLanewardError(error)) return [];
    throw error;
  }
}

/** The crew's lane order from its lanes' plans, read once when the crew loads, before anything runs. */
export function lanePlanOrder(lanes: readonly LaneSpec[]): LaneOrder {
  return laneOrder(lanes.map((lane) => ({ lane: lane.id, files: lanePlanFiles(lane.plan) })));
}
