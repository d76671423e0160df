import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as v from 'valibot';
import type { ResultCode } from '../../formats/codes/codes.ts';
import { toError } from '../../formats/codes/error.ts';
import { QA_TOOL_POLICY, type Frame, type ObserverConfig, type QaMode } from '../../formats/qa/record.ts';
import { qaVerdictSchema, VERDICT_FILE_MAX, type QaVerdict } from '../../formats/qa/verdict.ts';
import { isToolEventFormat, type ToolClass, type ToolEventFormat } from '../../formats/supervision/tool-policy.ts';
import { decodeUtf8 } from '../../formats/text/utf8.ts';
import { nowMs } from '../../workers/supervise/monotonic-timer.ts';
import { finishedWork, refusedOutcome, type Outcome } from '../../workers/supervise/outcome.ts';
import { jsonFromReply, launchOf, launchSpec, settleResult, type Launch } from '../providers/launch.ts';
import { progressFor } from '../../formats/providers/presets.ts';
import { SUPERVISION_DEFAULTS, type SpawnedChild, type SupervisionSpec } from '../../workers/supervise/spec.ts';
import { childRecord } from '../dispatch/orphans.ts';
import { transact, type Store } from '../store/store.ts';
import { journalChild } from './reservations.ts';
import { isBoundedReadError, readBounded } from '../fs/read-bounded.ts';
import { leaseSpecFor } from '../lease/lease-options.ts';
import { isDescriptorRefusal } from '../actions/load-descriptor.ts';
import { callDirPath } from './call-dirs.ts';
import { readFrames } from './frames.ts';
import type { SuperviseFn } from './supervise-fn.ts';
import { makeDirs } from '../fs/make-dirs.ts';

/** One observer call's end: a verdict, or the typed reason there is none. */
export interface ObserverResult {
  readonly call: number;
  readonly mode: QaMode;
  readonly verdict: QaVerdict | null;
  /** null with a verdict; else the outcome's code, QA_VERDICT_MALFORMED or QA_POLICY_UNENFORCEABLE. */
  readonly code: ResultCode | null;
  readonly detail: string;
  /** Whether the observer ran (and so received its prompt). */
  readonly started: boolean;
  /** When the call began (ISO, wall clock; its duration is the outcome's, monotonic). */
  readonly startedAt: string;
  readonly frames: readonly Frame[];
  readonly outcome: Outcome;
}

/** The files of one call, in its directory. */
export interface CallFiles {
  readonly dir: string;
  readonly prompt: string;
  readonly result: string;
  readonly stdout: string;
  readonly stderr: string;
}

export function callFiles(root: string, lane: string, dirName: string): CallFiles {
  const dir = callDirPath(root, lane, dirName);
  return { dir, prompt: join(dir, 'prompt.md'), result: join(dir, 'result.json'), stdout: join(dir, 'stdout.jsonl'), stderr: join(dir, 'stderr.txt') };
}

/** What one call of the observer runs under: the same for its first supervisor and for a later process that adopts it. */
export type CallSpec =
  | { readonly spec: SupervisionSpec; readonly launch: Launch; readonly events: ToolEventFormat; readonly allow: readonly ToolClass[] }
  | { readonly refused: { readonly outcome: Outcome; readonly code: ResultCode; readonly detail: string } };

/**
 * The supervision spec of one call: the signed action decides the timeout mode, the
 * mode's tool policy is passed (env and prompt) and enforced, output goes to the call's
 * files. A refusal (an action that is not valid, or one whose progress names no tools) is typed.
 */
export function callSpec(lane: string, observer: ObserverConfig, call: number, mode: QaMode, files: CallFiles, startedAt: number): CallSpec {
  const allow = QA_TOOL_POLICY[mode];
  const launch = launchOf(observer.preset ?? observer.argv, { role: 'observer', prompt: files.prompt, result: files.result, allow });
  let base: SupervisionSpec;
  try {
    base = leaseSpecFor(
      { file: observer.actionsFile, trust: observer.trust, action: observer.action, timeoutMs: observer.timeoutMs, ...SUPERVISION_DEFAULTS },
      launch.argv,
      startedAt,
    );
  } catch (error) {
    if (!isDescriptorRefusal(error)) throw error;
    return { refused: { outcome: refusedOutcome(error.code, observer.action, startedAt), code: error.code, detail: error.message } };
  }
  // An action that leaves progress to the preset reads the preset's own stream format.
  const events = progressFor(base.progress, launch.provider);
  if (!isToolEventFormat(events)) {
    return { refused: { outcome: refusedOutcome('DESCRIPTOR_INVALID', observer.action, startedAt), code: 'QA_POLICY_UNENFORCEABLE', detail: `action ${observer.action} has progress ${events ?? 'none'}` } };
  }
  const spec: SupervisionSpec = {
    ...launchSpec(base, launch, {
      LANEWARD_QA_LANE: lane,
      LANEWARD_QA_MODE: mode,
      LANEWARD_QA_CALL: String(call),
      LANEWARD_QA_TOOLS: allow.join(','),
      LANEWARD_QA_PROMPT: files.prompt,
      LANEWARD_QA_RESULT: files.result,
    }),
    toolPolicy: { name: mode, events, allow },
    stdoutFile: files.stdout,
    stderrFile: files.stderr,
  };
  return { spec, launch, events, allow };
}

/** The end of a call whose supervision (its own or an adoption) ended with `outcome`: its verdict from the result file or the stream. */
export function concludeCall(
  call: number,
  mode: QaMode,
  files: CallFiles,
  ready: Exclude<CallSpec, { refused: unknown }>,
  outcome: Outcome,
  startedAtIso: string,
): ObserverResult {
  const frames = readFrames(files.stdout, ready.events, call, mode);
  const end = (code: ResultCode | null, detail: string, verdict: QaVerdict | null): ObserverResult => ({
    call,
    mode,
    verdict,
    code,
    detail,
    started: outcome.providerStarted,
    startedAt: startedAtIso,
    frames,
    outcome,
  });
  if (!finishedWork(outcome)) {
    const detail =
      outcome.code === 'TOOL_DENIED'
        ? `tool ${outcome.deniedTool ?? '?'} is outside the ${mode} policy (${ready.allow.join(', ')}); verdict discarded`
        : `${outcome.status} after ${Math.round(outcome.durationMs)} ms (action ${ready.spec.action}, ${outcome.timeoutMode ?? 'no mode'})`;
    return end(outcome.code, detail, null);
  }
  // A preset's verdict is its reply, unless it wrote the file itself.
  if (ready.launch.provider !== undefined) settleResult(files.result, outcome.provider, jsonFromReply);
  const read = readVerdict(files.result);
  return 'verdict' in read ? end(null, '', read.verdict) : end('QA_VERDICT_MALFORMED', read.problem, null);
}

/**
 * Runs the observer once, supervised and bounded like any provider call (see
 * {@link callSpec}); the verdict file is read only after a clean exit. The call's
 * directory (`dirName`, named in its reservation when it was decided) is left for the
 * caller to remove once the call's end is recorded: a process killed before that leaves
 * the observer's stream for the next one. The observer's pid and start tick are journaled
 * in the reservation as soon as it is spawned, so that a later process can adopt it.
 * Never retried; every failure is a typed result, never a rejection.
 */
export async function callObserver(
  store: Store,
  lane: string,
  observer: ObserverConfig,
  call: number,
  mode: QaMode,
  dirName: string,
  prompt: string,
  supervise: SuperviseFn,
  cancel?: AbortSignal,
): Promise<ObserverResult> {
  const startedAt = nowMs();
  const startedAtIso = new Date().toISOString();
  const files = callFiles(store.root, lane, dirName);
  makeDirs(files.dir);
  writeFileSync(files.prompt, prompt, { mode: 0o600 });
  const ready = callSpec(lane, observer, call, mode, files, startedAt);
  if ('refused' in ready) {
    const { outcome, code, detail } = ready.refused;
    return { call, mode, verdict: null, code, detail, started: false, startedAt: startedAtIso, frames: [], outcome };
  }
  let journaled: Promise<void> = Promise.resolve();
  const onSpawn = (child: SpawnedChild) => {
    const record = childRecord(ready.spec, child);
    journaled = transact<'lanes', void>(store, 'lanes', lane, (lr) => (lr !== undefined && journalChild(lr, call, record) ? { change: { record: lr, events: [] }, result: undefined } : { change: null, result: undefined }));
    return journaled;
  };
  const outcome = await supervise(ready.spec, { onSpawn, ...(cancel === undefined ? {} : { cancel }) });
  // A journal that failed leaves the reservation without its child: a later process finds it by its environment.
  await journaled.catch(() => undefined);
  return concludeCall(call, mode, files, ready, outcome, startedAtIso);
}

/** The verdict file, parsed and checked; a problem names what is wrong. */
export function readVerdict(file: string): { verdict: QaVerdict } | { problem: string } {
  let bytes: Uint8Array;
  try {
    bytes = readBounded(file, VERDICT_FILE_MAX, { noFollow: true }).bytes;
  } catch (error) {
    return { problem: isBoundedReadError(error) ? `verdict file ${error.problem}` : toError(error).message };
  }
  // Refused like a reviewer's result: undecodable bytes are never replaced with U+FFFD.
  const { text, badLine } = decodeUtf8(bytes);
  if (badLine !== null) return { problem: `verdict file is not UTF-8 text (line ${badLine})` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { problem: 'verdict file is not JSON' };
  }
  const checked = v.safeParse(qaVerdictSchema, parsed);
  if (checked.success) return { verdict: checked.output };
  const first = checked.issues[0];
  const path = first.path?.map((item) => String(item.key)).join('.') ?? '';
  return { problem: `${first.message}${path === '' ? '' : ` at ${path}`}` };
}
