/**
 * What a lane keeps of each agent turn and failed call: typed ends, the calls with their
 * exit status and stderr's end, and what the sandbox refused; each list bounded.
 */

/** One agent turn's typed end. */
export interface TurnEnd {
  readonly turn: number;
  readonly code: string;
}

/** What a supervised call left to show why it ended: its exit status or signal and the end of its stderr. */
export interface CallEvidence {
  /** The call as the lane's story names it: `turn:<n>`. */
  readonly call: string;
  readonly code: string | null;
  /** The child's own exit status (128 + n for a signal), null when it never exited as ours. */
  readonly exitCode: number | null;
  readonly signal: string | null;
  /** The last lines of its stderr, oldest first, escaped and bounded (workers/supervise/stderr-tail.ts). */
  readonly stderr: readonly string[];
}

/** What one agent turn had refused by the sandbox, or did to the repository's refs. */
export interface SandboxRefusal {
  readonly turn: number;
  /** Writes the agent's tools reported refused as read-only (EROFS) in its stream. */
  readonly readOnlyWrites: number;
  /** The repository's refs added, removed or moved during the turn, by full name (HEAD as HEAD). */
  readonly refsMoved: readonly string[];
  /** Whether the turn ran under laneward's sandbox. */
  readonly contained: boolean;
}

/** The lane's sandbox refusals with `refusal` added (a turn ingested again replaces its own). */
export function withSandboxRefusal(progress: { readonly sandboxRefusals?: readonly SandboxRefusal[] | undefined }, refusal: SandboxRefusal): { sandboxRefusals: SandboxRefusal[] } {
  const list = [...(progress.sandboxRefusals ?? []).filter((r) => r.turn !== refusal.turn), refusal];
  return { sandboxRefusals: list.slice(-TURN_CALLS) };
}

/** One agent turn's call as it ended. */
export interface TurnCall extends CallEvidence {
  readonly turn: number;
  readonly durationMs: number;
  readonly marks: number;
  /** This turn's own cost in USD as its stream reported it; null when unknown. */
  readonly usd: number | null;
  readonly session: string | null;
}

/** Turn calls a lane keeps. */
export const TURN_CALLS = 64;

/** The lane's turn calls with `call` added (a turn ingested again replaces its own). */
export function withTurnCall(progress: { readonly turnCalls?: readonly TurnCall[] | undefined }, call: TurnCall): { turnCalls: TurnCall[] } {
  const calls = [...(progress.turnCalls ?? []).filter((c) => c.turn !== call.turn), call];
  return { turnCalls: calls.slice(-TURN_CALLS) };
}

/** How a call ended, as a detail says it: `exit 7`, `signal SIGKILL`, or null when neither is known. */
export function exitText(call: Pick<CallEvidence, 'exitCode' | 'signal'>): string | null {
  if (call.signal !== null) return `signal ${call.signal}`;
  return call.exitCode === null ? null : `exit ${call.exitCode}`;
}

/** What a detail ends with for a call whose stderr said something: `; stderr: <its last line>`; '' when it said nothing. */
export function stderrSuffix(call: CallEvidence | null | undefined): string {
  const last = call?.stderr.at(-1);
  return last === undefined ? '' : `; stderr: ${last}`;
}

/** Typed turn ends a lane keeps. */
export const TURN_ENDS = 64;

/** The lane's typed turn ends with turn `turn`'s added; `code` null adds nothing. */
export function withTurnEnd(progress: { readonly turnEnds?: readonly TurnEnd[] | undefined }, turn: number, code: string | null): { turnEnds?: TurnEnd[] } {
  if (code === null) return {};
  const ends = [...(progress.turnEnds ?? []).filter((end) => end.turn !== turn), { turn, code }];
  return { turnEnds: ends.slice(-TURN_ENDS) };
}
