// What the console's acting routes take and answer: plain data, checked here so the server
// (main/console/serve.ts) only routes. A body is JSON the page's script sent; everything in
// it is untrusted until it passed these checks.

import type { ControlAction, ControlRequest, ControlResult } from '../crew/control.ts';

// A change the console asks of a running crew is the same request `crew retry|cancel|stop` records.
export type { ControlAction, ControlRequest, ControlResult } from '../crew/control.ts';

/** What answering one lane did, as `crew answer` reports it. */
export interface AnswerResult {
  readonly lane: string;
  readonly status: 'answered' | 'not_waiting' | 'failed';
  /** Why it was not answered: GATE_REV_STALE (its gate is decided), PHASE_NOT_AWAITING (no gate yet), or the answer's refusal. */
  readonly code: string | null;
  readonly detail: string | null;
  readonly gateRev: number | null;
  /** The lane's run state after the answer (complete, gate_pending for a gate not fully answered...), null without a run. */
  readonly state: string | null;
  readonly by: string;
}

/**
 * The port the server acts through. `control` a retry, cancel or stop; `answer` the owner's
 * reply to the gates of `lanes` ('all': every lane waiting), by the person named (recorded as
 * `human:<by>`). Either may throw an error with a `code` (GATE_REPLY_UNPARSED, USAGE): the
 * request is then refused with that code.
 */
export interface ConsoleActions {
  control(request: ControlRequest): Promise<ControlResult>;
  answer(lanes: readonly string[] | 'all', reply: string, by: string): Promise<readonly AnswerResult[]>;
}

/** The acting routes, by path, and the action each asks for. */
export const ACTION_ROUTES: Readonly<Record<string, ControlAction | 'answer'>> = {
  '/actions/retry': 'retry',
  '/actions/cancel-call': 'cancel_call',
  '/actions/cancel-lane': 'cancel_lane',
  '/actions/stop': 'stop',
  '/actions/answer': 'answer',
};

/** The header the page sends its token in. */
export const TOKEN_HEADER = 'x-laneward-token';

/** A body larger than this is refused unread (a reply and a few hundred lane ids fit). */
export const MAX_ACTION_BODY_BYTES = 64 * 1024;

/** Lanes one answer may name at most (more: answer them all, or in several requests). */
export const MAX_ANSWER_LANES = 1_000;

// A name as `crew answer --by` takes it: one word of visible characters.
const NAME = /^[^\s\p{C}\p{Z}]{1,64}$/u;
// A lane id as a crew file may give it: a bounded line of visible text.
const LANE = /^[^\p{C}]{1,256}$/u;

/** A parsed body, or why it is refused (CONSOLE_BODY_INVALID and a detail). */
export type ParsedAction =
  | { readonly kind: 'control'; readonly request: ControlRequest }
  | { readonly kind: 'answer'; readonly lanes: readonly string[] | 'all'; readonly reply: string; readonly by: string }
  | { readonly kind: 'refused'; readonly detail: string };

/**
 * The request a route's JSON body makes. Control bodies are `{"lane": ID, "by": NAME}`
 * (stop: `{"by": NAME}`, no lane); answer bodies `{"lanes": [ID...] | "all", "reply":
 * TEXT, "by": NAME}`. Every action is a named person's (recorded as `human:<name>`, as
 * the shell's --by). Unknown fields are refused, so a typo is never an action on the
 * wrong thing.
 */
export function parseActionBody(action: ControlAction | 'answer', text: string): ParsedAction {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { kind: 'refused', detail: 'the body is not JSON' };
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { kind: 'refused', detail: 'the body is not a JSON object' };
  const fields = body as Record<string, unknown>;
  const allowed = action === 'answer' ? ['lanes', 'reply', 'by'] : action === 'stop' ? ['by'] : ['lane', 'by'];
  const extra = Object.keys(fields).find((key) => !allowed.includes(key));
  if (extra !== undefined) return { kind: 'refused', detail: `unknown field ${JSON.stringify(extra)} (takes ${allowed.join(', ')})` };
  const by = fields['by'];
  if (by === undefined) return { kind: 'refused', detail: `by is required: the name of the person who ${action === 'answer' ? 'answers' : 'asks'}` };
  if (typeof by !== 'string' || !NAME.test(by)) return { kind: 'refused', detail: 'by must be a name: one word of visible characters, at most 64' };
  if (action === 'answer') {
    const reply = fields['reply'];
    if (typeof reply !== 'string' || reply.trim() === '' || reply.length > 4_096) return { kind: 'refused', detail: 'reply must be a gate reply of at most 4096 characters' };
    const lanes = fields['lanes'];
    if (lanes === 'all') return { kind: 'answer', lanes: 'all', reply, by };
    if (!Array.isArray(lanes) || lanes.length === 0 || lanes.length > MAX_ANSWER_LANES || !lanes.every((lane) => typeof lane === 'string' && LANE.test(lane))) {
      return { kind: 'refused', detail: `lanes must be "all" or 1 to ${MAX_ANSWER_LANES} lane ids` };
    }
    return { kind: 'answer', lanes: [...new Set(lanes as string[])], reply, by };
  }
  const who = `human:${by}`;
  if (action === 'stop') return { kind: 'control', request: { action, lane: null, by: who } };
  const lane = fields['lane'];
  if (typeof lane !== 'string' || !LANE.test(lane)) return { kind: 'refused', detail: 'lane must be a lane id' };
  return { kind: 'control', request: { action, lane, by: who } };
}
