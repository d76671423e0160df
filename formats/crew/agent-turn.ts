import * as v from 'valibot';
import { decodeUtf8 } from '../text/utf8.ts';

/**
 * What a lane agent writes at `{result}` after one turn: its reply, whether the turn
 * changed files (diff-bearing turns drive review requests), and whether it reports the
 * work finished (finish_success, which only a passing cross-check lets through).
 */
export const agentTurnSchema = v.looseObject({
  text: v.pipe(v.string(), v.maxLength(64 * 1024)),
  diff: v.boolean(),
  finish: v.boolean(),
});

export type AgentTurn = v.InferOutput<typeof agentTurnSchema>;

/** The turn, or why it is refused: bytes that are not UTF-8 are refused as a reviewer's are. */
export function parseAgentTurn(bytes: Uint8Array): AgentTurn | string {
  const { text, badLine } = decodeUtf8(bytes);
  if (badLine !== null) return `the turn result is not UTF-8 text (line ${badLine})`;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'the turn result is not one JSON document';
  }
  const parsed = v.safeParse(agentTurnSchema, value);
  if (parsed.success) return parsed.output;
  const first = parsed.issues[0];
  return `${v.getDotPath(first) ?? 'turn result'}: ${first.message}`;
}
