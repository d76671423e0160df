import type { Verdict } from './verdict.ts';
import { CountingTracker, createLifecycles, eventObject, identity, IGNORE, TERMINAL } from './_event.ts';

// Every admissible or terminal line names one of these event types.
const NEEDLES = ['"tool_use"', '"tool_result"', '"result"'];

/**
 * Gemini CLI's `--output-format stream-json`. A `tool_use` event opens the identity
 * `tool_id` (a non-empty string) and a `tool_result` naming it closes it: the first open
 * and the first close admit one mark each; a result of a tool never opened admits
 * nothing. `{"type": "result"}` is the terminal event. Messages (the text deltas), `init`,
 * `error` and everything else admit nothing: this stream frames no model message, so a
 * long model step with no tool call renews nothing.
 */
export class GeminiStreamJsonTracker extends CountingTracker {
  private readonly lifecycles = createLifecycles(false);
  override feed(line: string): Verdict {
    const event = eventObject(line, NEEDLES);
    if (event === undefined) return IGNORE;
    if (event.type === 'result') return TERMINAL;
    if (event.type !== 'tool_use' && event.type !== 'tool_result') return IGNORE;
    const id = identity(event.tool_id);
    if (id === undefined) return IGNORE;
    return this.admit(event.type === 'tool_use' ? this.lifecycles.open(id) : this.lifecycles.close(id));
  }
}
