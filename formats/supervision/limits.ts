/**
 * The longest delay a runtime timer holds: 2^31 - 1 ms (about 24.8 days). setTimeout
 * fires at once for anything larger, so every budget laneward accepts is capped here.
 */
export const MAX_TIMER_MS = 2_147_483_647;
