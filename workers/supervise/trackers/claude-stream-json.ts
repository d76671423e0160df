import type { Verdict } from './verdict.ts';
import { CountingTracker, createLifecycles, eventObject, identity, IGNORE, objectAt, TERMINAL } from './_event.ts';

// Every admissible or terminal line names one of these; text, thinking and stream
// deltas that do not are never parsed. ("tool_use_id" does not contain `"tool_use"`.)
const NEEDLES = ['"tool_use"', '"tool_result"', '"result"', '"message_start"', '"message_stop"', '"content_block_start"', '"content_block_stop"'];

/**
 * Claude Code's `--output-format stream-json`. An `assistant` message opens one identity
 * per `tool_use` content block with a non-empty string `id`; a `user` message closes one
 * per `tool_result` block naming an opened `tool_use_id`. The first open and the first
 * close of each id admit one mark each, so one line can admit several (the verdict's
 * `count`). A close of an id never opened, a second open or close, and every other line
 * (text, thinking, system, usage, stream events) admit nothing; `{"type": "result"}` is
 * the terminal event.
 *
 * With `--include-partial-messages` the stream also frames each model message as
 * `stream_event` lines: a `message_start` naming the message id opens it, its
 * `content_block_start`/`content_block_stop` (by index) open and close each block, and
 * `message_stop` closes it. Those lifecycles admit marks the same way (first open, first
 * close), so a long model turn with no tool call still renews its lease block by block;
 * the deltas between them (the text, the thinking) and a message without an id admit
 * nothing.
 */
export class ClaudeStreamJsonTracker extends CountingTracker {
  // Unlike Codex items, a tool_result always follows its tool_use in one stream, so a
  // close of an unseen id is not evidence of anything and is not stored.
  private readonly lifecycles = createLifecycles(false);
  // Message and block identities, apart from tool ids: a message id never closes a tool.
  private readonly frames = createLifecycles(false);
  private message: string | undefined;
  override feed(line: string): Verdict {
    const event = eventObject(line, NEEDLES);
    if (event === undefined) return IGNORE;
    if (event.type === 'result') return TERMINAL;
    if (event.type === 'stream_event') return this.admit(this.frame(objectAt(event.event)));
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

  /** One message-framing event: the marks its lifecycle admits (0 for deltas and the anonymous). */
  private frame(event: Record<string, unknown> | undefined): number {
    switch (event?.type) {
      case 'message_start': {
        this.message = identity(objectAt(event.message)?.id);
        return this.message === undefined ? 0 : this.frames.open(`m:${this.message}`);
      }
      case 'message_stop': {
        const id = this.message;
        this.message = undefined;
        return id === undefined ? 0 : this.frames.close(`m:${id}`);
      }
      case 'content_block_start':
      case 'content_block_stop': {
        const index = event.index;
        if (this.message === undefined || typeof index !== 'number' || !Number.isSafeInteger(index) || index < 0) return 0;
        const key = `b:${index}:${this.message}`;
        return event.type === 'content_block_start' ? this.frames.open(key) : this.frames.close(key);
      }
      default:
        return 0;
    }
  }
}
