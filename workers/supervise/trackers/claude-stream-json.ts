import type { Verdict } from './verdict.ts';
import { CountingTracker, createLifecycles, eventObject, identity, IGNORE, objectAt, TERMINAL } from './_event.ts';

// Every admissible or terminal line names one of these; text, thinking and stream
// deltas that do not are never parsed. ("tool_use_id" does not contain `"tool_use"`.)
const NEEDLES = ['"tool_use"', '"tool_result"', '"result"'];

/**
 * Claude Code's `--output-format stream-json`. An `assistant` message opens one identity
 * per `tool_use` content block with a non-empty string `id`; a `user` message closes one
 * per `tool_result` block naming an opened `tool_use_id`. The first open and the first
 * close of each id admit one mark each, so one line can admit several (the verdict's
 * `count`). A close of an id never opened, a second open or close, and every other line
 * (text, thinking, system, usage, stream events) admit nothing; `{"type": "result"}` is
 * the terminal event.
 */
export class ClaudeStreamJsonTracker extends CountingTracker {
  // Unlike Codex items, a tool_result always follows its tool_use in one stream, so a
  // close of an unseen id is not evidence of anything and is not stored.
  private readonly lifecycles = createLifecycles(false);
  override feed(line: string): Verdict {
    const event = eventObject(line, NEEDLES);
    if (event === undefined) return IGNORE;
    if (event.type === 'result') return TERMINAL;
    const opening = event.type === 'assistant';
    if (!opening && event.type !== 'user') return IGNORE;
    const content = objectAt(event.message)?.content;
    if (!Array.isArray(content)) return IGNORE;
    let count = 0;
    for (const item of content) {
      const block = objectAt(item);
      if (block === undefined) continue;
      // The same id twice in one line is one identity: the ledger admits it once.
      if (opening && block.type === 'tool_use') {
        const id = identity(block.id);
        if (id !== undefined) count += this.lifecycles.open(id);
      } else if (!opening && block.type === 'tool_result') {
        const id = identity(block.tool_use_id);
        if (id !== undefined) count += this.lifecycles.close(id);
      }
    }
    return this.admit(count);
  }
}
