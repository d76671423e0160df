import type { StreamReader } from './facts.ts';
import { objectAt, readerOf, sessionAt, sumTokens, tokens } from './stream-base.ts';

/**
 * Claude Code's `--output-format stream-json`: the session from the first event that is
 * not `system` (every later event repeats it), the final text from the `result` event
 * (else the last assistant message's text blocks), usage and `total_cost_usd` from
 * `result`. An error result (`is_error`) names its API status in its text.
 */
export function claudeReader(): StreamReader {
  // The first event that is not `system` names the session; until one comes the init
  // event's stands in, so a call killed before its first reply still leaves a session to resume.
  let named = false;
  return readerOf((event, facts) => {
    const type = event.type;
    const id = sessionAt(event.session_id);
    if (type === 'system') {
      if (facts.sessionId === null && id !== undefined) facts.sessionId = id;
    } else if (!named && id !== undefined) {
      facts.sessionId = id;
      named = true;
    }
    if (type === 'assistant') {
      const content = objectAt(event.message)?.content;
      if (!Array.isArray(content)) return;
      const texts = content.map(objectAt).filter((b) => b?.type === 'text' && typeof b.text === 'string').map((b) => b!.text as string);
      if (texts.length > 0) facts.setText(texts.join(''));
      return;
    }
    if (type !== 'result') return;
    facts.finished = true;
    const usage = objectAt(event.usage);
    if (usage !== undefined) {
      facts.usage = {
        input: sumTokens(tokens(usage.input_tokens), tokens(usage.cache_creation_input_tokens), tokens(usage.cache_read_input_tokens)),
        output: tokens(usage.output_tokens),
        cachedInput: tokens(usage.cache_read_input_tokens),
      };
    }
    const cost = event.total_cost_usd;
    if (typeof cost === 'number' && Number.isFinite(cost) && cost >= 0) facts.costUsd = cost;
    const text = typeof event.result === 'string' ? event.result : undefined;
    if (event.is_error === true || (typeof event.subtype === 'string' && event.subtype.startsWith('error'))) {
      const status = typeof event.api_error_status === 'number' ? event.api_error_status : null;
      facts.error(text ?? String(event.subtype ?? 'error'), status);
    } else if (text !== undefined) facts.setText(text);
  }, isDelta);
}

/**
 * `--include-partial-messages` text and thinking deltas, most of a partial stream: the
 * reader takes nothing from them (the whole message follows as an `assistant` line, and
 * the `message_start` before them already named the session), so they are not parsed.
 */
function isDelta(line: string): boolean {
  return line.startsWith('{"type":"stream_event","event":{"type":"content_block_delta"');
}
