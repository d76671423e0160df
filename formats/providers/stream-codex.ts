import type { StreamReader } from './facts.ts';
import { objectAt, readerOf, sessionAt, stringAt, sumTokens, tokens } from './stream-base.ts';

/**
 * `codex exec --json`: the session is `thread.started`'s thread_id, the final text the
 * last `agent_message` item, usage from `turn.completed` (summed over turns); `error` and
 * `turn.failed` carry the API's error text.
 */
export function codexReader(): StreamReader {
  return readerOf((event, facts) => {
    switch (event.type) {
      case 'thread.started':
        facts.sessionId ??= sessionAt(event.thread_id) ?? null;
        return;
      case 'item.completed': {
        const item = objectAt(event.item);
        if (item?.type === 'agent_message' && typeof item.text === 'string') facts.setText(item.text);
        return;
      }
      case 'turn.completed': {
        facts.finished = true;
        const usage = objectAt(event.usage);
        if (usage === undefined) return;
        const before = facts.usage ?? { input: 0, output: 0, cachedInput: 0 };
        facts.usage = {
          input: sumTokens(before.input, tokens(usage.input_tokens)),
          output: sumTokens(before.output, tokens(usage.output_tokens)),
          cachedInput: sumTokens(before.cachedInput, tokens(usage.cached_input_tokens)),
        };
        return;
      }
      case 'turn.failed':
        facts.error(stringAt(objectAt(event.error)?.message) ?? 'turn failed');
        return;
      case 'error':
        facts.error(stringAt(event.message) ?? 'error');
        return;
    }
  });
}
