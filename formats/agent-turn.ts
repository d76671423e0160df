import * as v from 'valibot';

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

/** The turn, or why it is refused. */
export function parseAgentTurn(text: string): AgentTurn | string {
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
