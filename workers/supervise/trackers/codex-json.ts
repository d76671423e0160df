import type { Verdict } from './verdict.ts';
import { CountingTracker, createLifecycles, eventObject, identity, IGNORE, objectAt, TERMINAL } from './_event.ts';

// Every admissible or terminal line names one of these event types.
const NEEDLES = ['"item.started"', '"item.completed"', '"turn.completed"'];

/**
 * `codex exec --json`. `item.started` opens the identity `item.id` (a non-empty string)
 * and `item.completed` closes it; the first sighting and the first close admit one mark
 * each, and an item first seen completed admits one. `turn.completed` is the terminal
 * event; `item.updated`, `thread.*`, `turn.started`, anonymous items, reasoning and
 * agent-message items and everything else admit nothing.
 */
export class CodexJsonTracker extends CountingTracker {
  // Codex emits some items only once they complete, so a close of an unseen id is that
  // item's first sighting, as in step-lifecycle.
  private readonly lifecycles = createLifecycles(true);
  override feed(line: string): Verdict {
    const event = eventObject(line, NEEDLES);
    if (event === undefined) return IGNORE;
    if (event.type === 'turn.completed') return TERMINAL;
    const opening = event.type === 'item.started';
    if (!opening && event.type !== 'item.completed') return IGNORE;
    const item = objectAt(event.item);
    // Reasoning is thinking and an agent message is prose: neither is progress, however
    // it is framed.
    if (item?.type === 'reasoning' || item?.type === 'agent_message') return IGNORE;
    const id = identity(item?.id);
    if (id === undefined) return IGNORE;
    const count = opening ? this.lifecycles.open(id) : this.lifecycles.close(id);
    return this.admit(count);
  }
}
