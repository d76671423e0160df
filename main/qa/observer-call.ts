import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as v from 'valibot';
import type { ResultCode } from '../../formats/codes/codes.ts';
import { isLanewardError, toError } from '../../formats/codes/error.ts';
import { QA_TOOL_POLICY, type Frame, type ObserverConfig, type QaMode } from '../../formats/qa/record.ts';
import { qaVerdictSchema, VERDICT_FILE_MAX, type QaVerdict } from '../../formats/qa/verdict.ts';
import { isToolEventFormat } from '../../formats/supervision/tool-policy.ts';
import { decodeUtf8 } from '../../formats/text/utf8.ts';
import { nowMs } from '../../workers/supervise/monotonic-timer.ts';
import { finishedWork, refusedOutcome, type Outcome } from '../../workers/supervise/outcome.ts';
import { jsonFromReply, launchOf, launchSpec, settleResult } from '../providers/launch.ts';
import { progressFor } from '../../formats/providers/presets.ts';
import { SUPERVISION_DEFAULTS, type SupervisionSpec } from '../../workers/supervise/spec.ts';
import { isBoundedReadError, readBounded } from '../fs/read-bounded.ts';
import { leaseSpecFor } from '../lease/lease-options.ts';
import { callDir, sweepStaleCalls } from './call-dirs.ts';
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

/**
 * Runs the observer once, supervised and bounded like any provider call: the signed
 * action decides the timeout mode, the mode's tool policy is passed (env and prompt) and
 * enforced (TOOL_DENIED), the verdict file is read only after a clean exit. Never
 * retried; every failure is a typed result, never a rejection.
 */
export async function callObserver(
  root: string,
  lane: string,
  observer: ObserverConfig,
  call: number,
  mode: QaMode,
  prompt: string,
  run: SuperviseFn,
  cancel?: AbortSignal,
): Promise<ObserverResult> {
  const startedAt = nowMs();
  const startedAtIso = new Date().toISOString();
  const dir = callDir(root, lane, call);
  const files = { prompt: join(dir, 'prompt.md'), result: join(dir, 'result.json'), stdout: join(dir, 'stdout.jsonl'), stderr: join(dir, 'stderr.txt') };
  const end = (outcome: Outcome, code: ResultCode | null, detail: string, verdict: QaVerdict | null, frames: readonly Frame[] = []): ObserverResult => ({
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
  // The directories of calls whose process was killed are removed before this call makes its own.
  sweepStaleCalls(root, lane);
  makeDirs(dir);
  try {
    writeFileSync(files.prompt, prompt, { mode: 0o600 });
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
      if (!isLanewardError(error) || error.code !== 'DESCRIPTOR_INVALID') throw error;
      return end(refusedOutcome('DESCRIPTOR_INVALID', observer.action, startedAt), 'DESCRIPTOR_INVALID', error.message, null);
    }
    // An action that leaves progress to the preset reads the preset's own stream format.
    const events = progressFor(base.progress, launch.provider);
    if (!isToolEventFormat(events)) {
      return end(refusedOutcome('DESCRIPTOR_INVALID', observer.action, startedAt), 'QA_POLICY_UNENFORCEABLE', `action ${observer.action} has progress ${events ?? 'none'}`, null);
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
    const outcome = await run(spec, cancel === undefined ? {} : { cancel });
    const frames = readFrames(files.stdout, events, call, mode);
    if (!finishedWork(outcome)) {
      const detail =
        outcome.code === 'TOOL_DENIED'
          ? `tool ${outcome.deniedTool ?? '?'} is outside the ${mode} policy (${allow.join(', ')}); verdict discarded`
          : `${outcome.status} after ${Math.round(outcome.durationMs)} ms (action ${observer.action}, ${outcome.timeoutMode ?? 'no mode'})`;
      return end(outcome, outcome.code, detail, null, frames);
    }
    // A preset's verdict is its reply, unless it wrote the file itself.
    if (launch.provider !== undefined) settleResult(files.result, outcome.provider, jsonFromReply);
    const read = readVerdict(files.result);
    return 'verdict' in read ? end(outcome, null, '', read.verdict, frames) : end(outcome, 'QA_VERDICT_MALFORMED', read.problem, null, frames);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
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
