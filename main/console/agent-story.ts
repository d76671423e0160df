import type { AttemptStory, LaneStory } from '../../formats/console/lane-story.ts';
import { parseAgentTurn } from '../../formats/crew/agent-turn.ts';
import { isTerminalStage, type LaneProgress } from '../../formats/crew/record.ts';
import { readRunBytes } from './run-files.ts';
import { boundedLine, usd } from './story-values.ts';

/** A turn result larger than the crew itself reads is no result. */
const MAX_TURN_BYTES = 256 * 1024;

/**
 * The agent's turns as its progress and turn files record them: a turn whose result file
 * parses completed; the turn in flight is open, or failed/interrupted with the lane's
 * code when the lane stopped in it; a turn lost to a crash is lost. Each turn that ended
 * shows its call's duration, marks, cost and session (`turnCalls`); only the last turn's
 * spawn time is kept (`turnChild`).
 */
export function agentStory(progress: LaneProgress): { attempts: AttemptStory[]; agent: LaneStory['agent'] } {
  const attempts: AttemptStory[] = [];
  for (let n = 1; n <= progress.turnsDispatched; n++) attempts.push(turnAttempt(progress, n));
  return {
    attempts,
    agent: {
      turnsDispatched: progress.turnsDispatched,
      turnsDone: progress.turnsDone,
      lostTurns: [...progress.lostTurns],
      session: progress.session ?? null,
      costUsd: progress.agentUsd === undefined ? null : usd(progress.agentUsd),
      sessionUsd: progress.sessionUsd ?? null,
    },
  };
}

function turnAttempt(progress: LaneProgress, n: number): AttemptStory {
  const last = n === progress.turnsDispatched;
  const ended = turnEnd(progress, n);
  const call = progress.turnCalls?.find((c) => c.turn === n);
  return {
    id: `turn:${n}`,
    kind: 'agent',
    voice: null,
    phase: null,
    model: null,
    ...ended,
    startedAt: last ? (progress.turnChild?.at ?? null) : null,
    // What its call kept as it ended (lanes saved before turn calls were kept have none).
    durationMs: call?.durationMs ?? null,
    marks: call?.marks ?? null,
    cleanupConfirmed: null,
    costUsd: call?.usd ?? null,
    session: call?.session ?? null,
    exitCode: call?.exitCode ?? null,
    signal: call?.signal ?? null,
    stderr: call === undefined ? [] : [...call.stderr],
  };
}

function turnEnd(progress: LaneProgress, n: number): Pick<AttemptStory, 'outcome' | 'code' | 'detail'> {
  const ended = turnStory(progress, n);
  // The call's own code, where it ended with one (a result that stood after PROVIDER_NO_EXIT, a failure's).
  const code = progress.turnEnds?.find((end) => end.turn === n)?.code ?? null;
  return code === null || ended.code !== null ? ended : { ...ended, code };
}

function turnStory(progress: LaneProgress, n: number): Pick<AttemptStory, 'outcome' | 'code' | 'detail'> {
  const inFlight = n === progress.turnsDispatched && n > progress.turnsDone;
  if (inFlight && !isTerminalStage(progress.stage)) return { outcome: 'open', code: null, detail: null };
  if (inFlight) {
    const outcome = progress.stage === 'failed' ? 'failed' : 'interrupted';
    return { outcome, code: progress.code, detail: progress.detail === null ? null : boundedLine(progress.detail) };
  }
  if (progress.lostTurns.includes(n)) return { outcome: 'lost', code: null, detail: 'dispatched before a crash; its end was never seen' };
  const bytes = readRunBytes(progress.runDir, `agent/turn-${n}.json`, MAX_TURN_BYTES);
  const turn = bytes === null ? 'no readable result file' : parseAgentTurn(bytes);
  if (typeof turn === 'string') return { outcome: 'failed', code: null, detail: boundedLine(turn) };
  const first = turn.text.split('\n').find((line) => line.trim() !== '') ?? '';
  return { outcome: 'completed', code: null, detail: first === '' ? null : boundedLine(first) };
}
