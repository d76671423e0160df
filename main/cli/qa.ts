import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { EXIT } from '../../formats/codes/codes.ts';
import { exitStatus } from '../../formats/codes/exit-status.ts';
import { fixClause, issue, renderIssueLine } from '../../formats/codes/issue.ts';
import { jsonText } from '../../formats/text/json-text.ts';
import { MAX_TIMER_MS } from '../../formats/supervision/limits.ts';
import { renderQaLine, renderStatusLine } from '../../formats/qa/lines.ts';
import { TURN_ROLES, type TurnRole } from '../../formats/qa/record.ts';
import { LanewardError } from '../../formats/codes/error.ts';
import { isBoundedReadError, readBounded } from '../fs/read-bounded.ts';
import { configuredStateRoot } from '../plan/settings.ts';
import { stateRootFor } from '../plan/run-binding.ts';
import { openStateRoot } from '../plan/state-root.ts';
import { qaReset, qaStop } from '../qa/clear.ts';
import { qaFinish } from '../qa/finish.ts';
import { qaConfigFromEnv } from '../qa/qa-config.ts';
import { qaStart } from '../qa/start.ts';
import { noLane, qaStatus } from '../qa/status.ts';
import { inProcessSupervise } from '../qa/supervise-fn.ts';
import { qaTurn } from '../qa/turn.ts';
import type { QaReport } from '../qa/report.ts';
import { openStore, type Store } from '../store/store.ts';
import { intOption, usage } from './args.ts';
import { command, group } from './command.ts';
import { interruptSignal } from '../interrupt.ts';
import type { Io } from './io.ts';

export const QA_HELP = `usage: laneward qa <start|turn|finish|stop|reset|status> --lane ID [--state DIR] [--json]

  start  --observer 'CMD ARGS {prompt} {result}' --actions F --trust PUB --action NAME [--timeout-ms N]
         record the lane and bootstrap its observer (a read-only scan); cadence waits for it
  turn   --role user|assistant|reasoning (--text T | --text-file F) [--diff]
         ingest one turn; every LANEWARD_QA_CADENCE turns (3) the observer reviews the new
         ones; every LANEWARD_QA_REVIEW_COOLDOWN_TURNS diff-bearing turns (1) a review request
  finish the cross-check before completion: exit 0 only when it passes
  stop   clear the history and stop the lane (a final review request if diffs are unreviewed)
  reset  clear the history and bootstrap the observer again
  status the lane's state (reads only)

The observer runs once per call, no shell: the template is split on spaces, {prompt} and
{result} replaced in each word. It reads the prompt file and writes its verdict to
{result}: {"verdict":"pass"|"fail","note":"...","guidance":"..."}. It is supervised like
lease run under the signed action NAME, whose progress must be claude-stream-json or
codex-json: its tool events are checked against the mode's policy (bootstrap: read,
search; cadence: search; cross-check: every tool), passed in LANEWARD_QA_TOOLS; a tool
outside it ends the call (TOOL_DENIED) and its verdict is discarded.
Lines: QA_LANE_STARTED: QA_OBSERVER_READY: QA_OBSERVER_FAILED: QA_TURN: QA_CADENCE_PAUSED:
QA_UPDATE: QA_REVIEW_REQUEST: QA_CROSS_CHECK: QA_COMPLETION_REFUSED: QA_CLEARED: QA_STATUS:
--json prints one object {ok, lane, code, message, events, status}.
Exit: 0 ok; 3 refused (QA_NO_OBSERVER, QA_NOT_BOOTSTRAPPED, QA_CROSS_CHECK_FAILED,
QA_BOOTSTRAP_FAILED, QA_LANE_ACTIVE, QA_LANE_CLOSED, QA_POLICY_UNENFORCEABLE,
DESCRIPTOR_INVALID); 124 an observer that timed out; 1 TOOL_DENIED, QA_VERDICT_MALFORMED
and other observer failures; 2 usage. A failed cadence check does not fail qa turn: its
line carries the verdict or the code.`;

const COMMON = { lane: { type: 'string' }, state: { type: 'string' }, json: { type: 'boolean' } } as const;
const TURN_TEXT_MAX = 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 600_000;

function need(values: Record<string, unknown>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw usage(`--${name} is required`);
  return value;
}

function rootOf(values: { state?: string | undefined }): string {
  return stateRootFor(configuredStateRoot(values.state, process.env, process.cwd()), undefined, process.cwd());
}

function storeOf(values: { state?: string | undefined }): Store {
  return openStore(rootOf(values));
}

/** Prints a report (lines, or one JSON object) and returns its exit status. */
function print(io: Io, context: string, json: boolean, result: QaReport, cancelSignal: string | null = null): number {
  if (json) {
    io.out(jsonText({ ok: result.code === null, lane: result.lane, code: result.code, message: result.message, fix: result.code === null ? null : fixClause(result.code, context), events: result.events, status: result.status }));
  } else {
    for (const event of result.events) io.out(renderQaLine(event));
    if (result.code !== null) io.err(renderIssueLine(context, issue(result.code, '', result.message === '' ? `lane ${result.lane}` : result.message)));
  }
  return result.code === null ? EXIT.ok : exitStatus(result.code, { cancelSignal });
}

/**
 * Runs a QA function that may call the observer, cancelled by the fatal signals (the
 * observer is torn down first), and prints its report.
 */
async function printInterruptible(io: Io, context: string, json: boolean, run: (cancel: AbortSignal) => Promise<QaReport>): Promise<number> {
  const interrupt = interruptSignal();
  try {
    const result = await run(interrupt.signal);
    const reason: unknown = interrupt.signal.reason;
    return print(io, context, json, result, interrupt.signal.aborted && typeof reason === 'string' ? reason : null);
  } finally {
    interrupt.release();
  }
}

/** The observer template, split on whitespace (no quotes, no shell). */
export function observerArgv(template: string): string[] {
  const argv = template.split(/\s+/).filter((word) => word !== '');
  if (argv.length === 0) throw usage('--observer is empty; give a command such as \'node observer.mjs {prompt} {result}\'');
  return argv;
}

function turnText(values: { text?: string | undefined; 'text-file'?: string | undefined }): string {
  const { text, 'text-file': file } = values;
  if ((text === undefined) === (file === undefined)) throw usage('give exactly one of --text and --text-file');
  if (text !== undefined) {
    if (Buffer.byteLength(text) > TURN_TEXT_MAX) throw usage(`--text is over ${TURN_TEXT_MAX} bytes; use a shorter turn`);
    return text;
  }
  try {
    return readBounded(file!, TURN_TEXT_MAX).bytes.toString('utf8');
  } catch (error) {
    const problem = isBoundedReadError(error) ? error.problem : 'unreadable';
    throw new LanewardError('IO_ERROR', `--text-file is ${problem} (at most ${TURN_TEXT_MAX} bytes)`, { path: file!, cause: error });
  }
}

const START = command({
  name: 'start',
  help: QA_HELP,
  options: { ...COMMON, observer: { type: 'string' }, actions: { type: 'string' }, trust: { type: 'string' }, action: { type: 'string' }, 'timeout-ms': { type: 'string' } },
  positionals: false,
  run: async ({ values }, io) => {
    const lane = need(values, 'lane');
    const observer = {
      argv: observerArgv(need(values, 'observer')),
      actionsFile: need(values, 'actions'),
      trust: need(values, 'trust'),
      action: need(values, 'action'),
      timeoutMs: intOption('timeout-ms', values['timeout-ms'], 1, MAX_TIMER_MS) ?? DEFAULT_TIMEOUT_MS,
    };
    const store = storeOf(values);
    return printInterruptible(io, 'laneward qa start', values.json === true, (cancel) => qaStart(store, lane, { observer, cancel }, inProcessSupervise));
  },
});

const TURN = command({
  name: 'turn',
  help: QA_HELP,
  options: { ...COMMON, role: { type: 'string' }, text: { type: 'string' }, 'text-file': { type: 'string' }, diff: { type: 'boolean' } },
  positionals: false,
  run: async ({ values }, io) => {
    const lane = need(values, 'lane');
    const role = need(values, 'role');
    if (!(TURN_ROLES as readonly string[]).includes(role)) throw usage(`expected --role user, assistant or reasoning, got ${JSON.stringify(role)}`);
    const diff = values.diff === true;
    if (diff && role === 'reasoning') throw usage('--diff applies to user and assistant turns; reasoning carries none');
    const text = turnText(values);
    const config = qaConfigFromEnv(process.env);
    const store = storeOf(values);
    return printInterruptible(io, 'laneward qa turn', values.json === true, (cancel) => qaTurn(store, lane, { role: role as TurnRole, text, diff, config, cancel }, inProcessSupervise));
  },
});

const FINISH = command({
  name: 'finish',
  help: QA_HELP,
  options: COMMON,
  positionals: false,
  run: async ({ values }, io) => {
    const lane = need(values, 'lane');
    const store = storeOf(values);
    return printInterruptible(io, 'laneward qa finish', values.json === true, (cancel) => qaFinish(store, lane, { cancel }, inProcessSupervise));
  },
});

const STOP = command({
  name: 'stop',
  help: QA_HELP,
  options: COMMON,
  positionals: false,
  run: async ({ values }, io) => {
    const lane = need(values, 'lane');
    const store = storeOf(values);
    return print(io, 'laneward qa stop', values.json === true, await qaStop(store, lane, {}, inProcessSupervise));
  },
});

const RESET = command({
  name: 'reset',
  help: QA_HELP,
  options: COMMON,
  positionals: false,
  run: async ({ values }, io) => {
    const lane = need(values, 'lane');
    const store = storeOf(values);
    return printInterruptible(io, 'laneward qa reset', values.json === true, (cancel) => qaReset(store, lane, { cancel }, inProcessSupervise));
  },
});

const STATUS = command({
  name: 'status',
  help: QA_HELP,
  options: COMMON,
  positionals: false,
  run: async ({ values }, io) => {
    const lane = need(values, 'lane');
    // Reads only, as plan status does: a root with no store holds no lane and is not
    // created, and a root on a read-only file system is opened read-only.
    const root = rootOf(values);
    const result = existsSync(join(root, 'data.mdb')) ? qaStatus(openStateRoot(root, 'read'), lane) : noLane(lane);
    const json = values.json === true;
    if (!json && result.status !== null) io.out(renderStatusLine(result.status));
    return print(io, 'laneward qa status', json, result);
  },
});

export const QA = group({
  name: 'qa',
  help: QA_HELP,
  commands: [START, TURN, FINISH, STOP, RESET, STATUS],
  failure: { json: true },
});
