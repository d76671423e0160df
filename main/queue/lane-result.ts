import * as v from 'valibot';
import { LANE_STAGES, type LaneProgress } from '../../formats/crew/record.ts';

// What a worker sends back is read as data from Redis, not trusted as a record: a field
// that would print as more than itself (a code with a space, a lane id of another lane)
// is refused before it reaches a line, a view or the store.
const progressSchema = v.looseObject({
  stage: v.picklist(LANE_STAGES),
  attempts: v.pipe(v.number(), v.integer(), v.minValue(0)),
  turnsDispatched: v.pipe(v.number(), v.integer(), v.minValue(0)),
  turnsDone: v.pipe(v.number(), v.integer(), v.minValue(0)),
  lostTurns: v.array(v.pipe(v.number(), v.integer())),
  code: v.nullable(v.pipe(v.string(), v.regex(/^[A-Z][A-Z0-9_]{0,63}$/))),
  detail: v.nullable(v.pipe(v.string(), v.maxLength(4096))),
  updatedAt: v.string(),
  stages: v.optional(v.array(v.object({ stage: v.picklist(LANE_STAGES), at: v.string() }))),
  agentUsd: v.optional(v.pipe(v.number(), v.minValue(0))),
  // A worker's evidence is printed on the coordinator's lines: each value bounded, a code a code.
  failedCall: v.optional(
    v.nullable(
      v.object({
        call: v.pipe(v.string(), v.regex(/^(?:turn:\d{1,9}|observer:\d{1,9}|a\d{1,9})$/)),
        code: v.nullable(v.pipe(v.string(), v.regex(/^[A-Z][A-Z0-9_]{0,63}$/))),
        exitCode: v.nullable(v.pipe(v.number(), v.integer())),
        signal: v.nullable(v.pipe(v.string(), v.regex(/^SIG[A-Z0-9]{1,16}$/))),
        stderr: v.pipe(v.array(v.pipe(v.string(), v.maxLength(1024))), v.maxLength(16)),
      }),
    ),
  ),
  turnEnds: v.optional(v.array(v.object({ turn: v.pipe(v.number(), v.integer(), v.minValue(1)), code: v.pipe(v.string(), v.regex(/^[A-Z][A-Z0-9_]{0,63}$/)) }))),
});

/** The lane's progress as a worker reported it, made this coordinator's (its crew, lane and run directory), or null when malformed. */
export function laneProgressFrom(value: unknown, crew: string, lane: string, runDir: string): LaneProgress | null {
  const parsed = v.safeParse(progressSchema, value);
  if (!parsed.success) return null;
  return { ...(parsed.output as unknown as LaneProgress), crew, lane, runDir, guidance: null, stoppedIn: null };
}
