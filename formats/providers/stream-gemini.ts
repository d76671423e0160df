import type { StreamReader } from './facts.ts';
import { objectAt, readerOf, sessionAt, stringAt, tokens } from './stream-base.ts';

/**
 * Gemini CLI's `--output-format stream-json`: the session from `init`, the final text
 * the assistant `message` deltas since the last tool call, usage from `result.stats`,
 * and `error` events (or an error `result`) for API failures.
 */
export function geminiReader(): StreamReader {
  let fresh = true;
  return readerOf((event, facts) => {
    switch (event.type) {
      case 'init':
        facts.sessionId ??= sessionAt(event.session_id) ?? null;
        return;
      case 'message':
        if (event.role !== 'assistant' || typeof event.content !== 'string') return;
        // A message after a tool call starts the text anew: the final text is the last reply.
        if (fresh) facts.setText(event.content);
        else facts.appendText(event.content);
        fresh = false;
        return;
      case 'tool_use':
      case 'tool_result':
        fresh = true;
        return;
      case 'error': {
        const message = stringAt(event.message) ?? stringAt(objectAt(event.error)?.message) ?? 'error';
        facts.error(message, typeof event.status === 'number' ? event.status : null);
        return;
      }
      case 'result': {
        facts.finished = true;
        const stats = objectAt(event.stats);
        if (stats !== undefined) {
          facts.usage = { input: tokens(stats.input_tokens), output: tokens(stats.output_tokens), cachedInput: tokens(stats.cached ?? stats.cached_tokens) };
        }
        if (event.status === 'error') facts.error(stringAt(objectAt(event.error)?.message) ?? 'error');
        return;
      }
    }
  });
}
