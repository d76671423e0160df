import { join } from 'node:path';
import type { AnswerResult } from '../../formats/console/actions.ts';
import { isLanewardError, LanewardError, toError } from '../../formats/codes/error.ts';
import { replyFormProblem } from '../../formats/gate/reply.ts';
import { configuredStateRoot, defaultStateRoot, locateRun, planAnswer, readPlanEnv } from '../plan/index.ts';
import { loadCrew, type LoadedCrew } from './load-crew.ts';

export interface CrewAnswerOptions {
  readonly file: string;
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly state: string | undefined;
  /** One lane, or null for every lane whose gate waits. */
  readonly lane: string | null;
  /** The owner's reply, in the gate grammar, recorded as given. */
  readonly reply: string;
  /** The owner's name: the answer is recorded as `human:<name>` (answered_role human). */
  readonly by: string;
}

/** What answering one lane did (the console's answer route reports the same). */
export type LaneAnswer = AnswerResult;

// A name is visible text, one word: no space, control, format (bidi) or separator character.
const NAME = /^[^\s\p{C}\p{Z}]{1,64}$/u;

/**
 * `crew answer`: the owner's reply to the gates of a crew's lanes, through the store, so it
 * works from another shell while the crew runs (the running crew sees it and drives the
 * lane on) and before the crew is run again (which continues the lane). Every answer is
 * the owner's: answered_role human, answered_by `human:<name>`, the reply as given.
 */
export async function crewAnswer(options: CrewAnswerOptions): Promise<LaneAnswer[]> {
  checkAnswer(options.reply, options.by);
  const loaded = loadCrew(options.file, options.cwd);
  const root = configuredStateRoot(options.state, options.env, options.cwd)?.path ?? defaultStateRoot(options.cwd);
  return answerLoaded({ loaded, root, env: options.env, cwd: options.cwd }, options.lane === null ? 'all' : [options.lane], options.reply, options.by);
}

/** A reply and a name `crew answer` takes, or the error refusing them before any lane is answered. */
function checkAnswer(reply: string, by: string): void {
  if (!NAME.test(by)) throw new LanewardError('USAGE', `--by must be the owner's name, one word of visible characters (at most 64), got ${JSON.stringify(by)}`);
  // One reply for many lanes: a reply that cannot parse is refused before any lane is answered.
  const problem = replyFormProblem(reply);
  if (problem !== null) throw new LanewardError('GATE_REPLY_UNPARSED', `--reply ${JSON.stringify(reply)} is not a gate reply (${problem})`);
}

/**
 * The answer of `crew answer` for a crew already loaded (the console's, in the crew's own
 * process): the named lanes, in the crew file's order, or 'all' the lanes whose gate waits.
 * A lane the crew does not have, a name or a reply refused, is refused before any is answered.
 */
export async function answerLoaded(crew: { readonly loaded: LoadedCrew; readonly root: string; readonly env: NodeJS.ProcessEnv; readonly cwd: string }, named: readonly string[] | 'all', reply: string, by: string): Promise<LaneAnswer[]> {
  checkAnswer(reply, by);
  const { loaded } = crew;
  const unknown = named === 'all' ? undefined : named.find((id) => !loaded.lanes.some((l) => l.id === id));
  if (unknown !== undefined) throw new LanewardError('USAGE', `crew answer --lane: the crew file names no lane ${JSON.stringify(unknown)}`);
  const planEnv = readPlanEnv(crew.env, crew.cwd, crew.root);
  const lanes = named === 'all' ? loaded.lanes : loaded.lanes.filter((l) => named.includes(l.id));
  const answers: LaneAnswer[] = [];
  for (const lane of lanes) {
    const runDir = join(loaded.out, lane.id);
    const answer = await answerLane(lane.id, runDir, reply, `human:${by}`, planEnv);
    // --all answers the lanes that wait; a lane not at its gate is only reported when named.
    if (named === 'all' && answer.status === 'not_waiting') continue;
    answers.push(answer);
  }
  return answers;
}

async function answerLane(lane: string, runDir: string, reply: string, by: string, planEnv: ReturnType<typeof readPlanEnv>): Promise<LaneAnswer> {
  let record;
  try {
    record = locateRun(runDir, planEnv).record;
  } catch {
    return { lane, status: 'not_waiting', code: 'PHASE_NOT_AWAITING', detail: 'the lane has no review run yet', gateRev: null, state: null, by };
  }
  if (record.state !== 'gate_pending' || record.gate === null) {
    const code = record.gate === null ? 'PHASE_NOT_AWAITING' : 'GATE_REV_STALE';
    return { lane, status: 'not_waiting', code, detail: record.gate === null ? `the run has no gate yet (${record.state})` : `gate ${record.gate.rev} is already decided (${record.state})`, gateRev: record.gate?.rev ?? null, state: record.state, by };
  }
  const gateRev = record.gate.rev;
  try {
    // Against the recommendations as they stand: the brief the owner read names the same rec_hash.
    const report = await planAnswer({ out: runDir, gateRev, reply, by, recHash: record.gate.rec_hash }, planEnv);
    return { lane, status: 'answered', code: null, detail: null, gateRev, state: report.status, by };
  } catch (error) {
    return { lane, status: 'failed', code: isLanewardError(error) ? error.code : 'INTERNAL', detail: toError(error).message, gateRev, state: record.state, by };
  }
}
