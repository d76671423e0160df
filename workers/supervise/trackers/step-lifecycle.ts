import type { Verdict } from './verdict.ts';
import { CountingTracker, createLifecycles, eventObject, identity, IGNORE } from './_event.ts';

// Every admissible line names one of these types; others are never parsed.
const NEEDLES = ['"step_update"', '"native_tool_v4"'];
const OPEN_STATUSES: ReadonlySet<unknown> = new Set(['pending', 'in_progress']);
const CLOSE_STATUSES: ReadonlySet<unknown> = new Set(['success', 'failure']);

/**
 * Gemini's projected step lifecycle: `{"type": "step_update" | "native_tool_v4",
 * "conversation_id": string, "step_index": integer >= 0, "status": "pending" |
 * "in_progress" | "success" | "failure"}`. The identity is (conversation_id, step_index):
 * its first well-formed sighting admits one mark and its first later success or failure
 * one more; an identity first seen already closed admits one. A repeated open, a second
 * close, an open after the close, and any line that is not exactly well-formed (unknown
 * type or status, a missing, empty or wrong-typed field) admit nothing.
 */
export class StepLifecycleTracker extends CountingTracker {
  private readonly lifecycles = createLifecycles(true);
  override feed(line: string): Verdict {
    const event = eventObject(line, NEEDLES);
    if (event === undefined || (event.type !== 'step_update' && event.type !== 'native_tool_v4')) return IGNORE;
    const conversation = identity(event.conversation_id);
    const step = event.step_index;
    // Safe integers only: above 2^53 two distinct indexes can parse to the same number.
    if (conversation === undefined || typeof step !== 'number' || !Number.isSafeInteger(step) || step < 0) return IGNORE;
    const status = event.status;
    const closing = CLOSE_STATUSES.has(status);
    if (!closing && !OPEN_STATUSES.has(status)) return IGNORE;
    // Collision-free: the index is digits only, so the first ':' ends it whatever the
    // conversation id holds ("a:1" step 2 is "2:a:1", "a" step 12 is "12:a"); -0 prints as 0.
    const key = `${step}:${conversation}`;
    const count = closing ? this.lifecycles.close(key) : this.lifecycles.open(key);
    return this.admit(count);
  }
}
