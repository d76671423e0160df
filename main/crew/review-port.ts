import { forLane } from '../../formats/crew/file.ts';
import { isLanewardError, toError } from '../../formats/codes/error.ts';
import type { Dispatcher } from '../dispatch/dispatcher.ts';
import { answerRun, attemptOf, locateRun, phaseOf, planExport, planNext, planRun, readBinding, type PlanEnv, type PlanReport, type RunStop } from '../plan/index.ts';
import type { CrewActions } from './crew-actions.ts';
import type { LoadedCrew } from './load-crew.ts';
import type { OrphanSettlements } from './orphan-sweep.ts';
import type { ReviewPort, ReviewStep } from './ports.ts';
import { OWNER_ANSWERS } from '../../formats/crew/file.ts';
import { gateDecided, ownerGate } from './owner-gate.ts';
import { stderrSuffix, type CallEvidence } from '../../formats/crew/record.ts';
import type { AttemptEnd } from '../plan/run-types.ts';

/** Who answers a crew's gates: the crew itself, on the authority of its file's answer policy. */
export const CREW_ANSWERER = 'agent:laneward-crew';

const DRIVEN = new Set(['gate_pending', 'complete', 'reviewed']);
const EXPORTABLE = new Set(['gate_pending', 'complete', 'incomplete', 'reviewed']);

/** The review-run side of a lane, on the plan commands' own functions. */
export function crewReviewPort(context: {
  readonly crew: LoadedCrew;
  readonly actions: CrewActions;
  readonly planEnv: PlanEnv;
  readonly supervise: Dispatcher['supervise'];
  readonly cancel: AbortSignal;
  /**
   * A lane's own cancel under the crew's (crew cancel): its review run is interrupted by it,
   * so a cancelled reviewer is not minted anew within the run; absent: the crew's cancel.
   */
  readonly laneCancel?: (lane: string) => AbortSignal;
  /** Orphans of a crew that died, being settled before the lanes started. */
  readonly orphans?: OrphanSettlements;
  /** A stopped review run's lane detail, worded at the edge (CrewWords.stop). */
  readonly stopDetail: (stop: RunStop) => string;
}): ReviewPort {
  const { crew, planEnv } = context;
  const settings = crew.crew;
  return {
    async drive(lane, runDir, driveOptions) {
      // Children that spawned: a dispatch cancelled while it waited for its slot started none.
      let attempts = 0;
      const supervise: Dispatcher['supervise'] = (spec, options = {}) =>
        context.supervise(spec, {
          ...options,
          onSpawn: async (child) => {
            // The child's journal record is queued first (that is what a crew started after
            // this one needs), the lane's count in the same event-loop turn: both commit in
            // one batched commit, one disk flush, rather than one after the other.
            const journaled = Promise.resolve(options.onSpawn?.(child));
            attempts += 1;
            await Promise.all([journaled, driveOptions?.onSpawn?.()]);
          },
        });
      const orphans = context.orphans?.review(runDir);
      return step(async () => {
        await redispatchCancelled(runDir, planEnv, driveOptions?.retry === true);
        const report = await planRun(
          {
            out: runDir,
            plan: lane.plan,
            native: forLane(lane.runners.native, lane.id),
            outside: forLane(lane.runners.outside, lane.id),
            nativeModel: settings.models.native,
            outsideModel: settings.models.outside,
            action: context.actions.names.reviewer,
            actionsFile: crew.actionsFile,
            trust: crew.trustFile,
            cancel: context.laneCancel?.(lane.id) ?? context.cancel,
            ...(orphans === undefined ? {} : { orphans }),
            timeoutMs: settings.limits.timeout_ms,
            // Reviewers are charged like every call of the crew: claude's cost, others' tokens
            // at the crew's prices. The crew's cap covers them in the crew's own ledger (the
            // supervise composition in crew-supervise.ts), so the run itself holds no cap of its own.
            ...(settings.prices === undefined ? {} : { prices: settings.prices }),
          },
          planEnv,
          supervise,
        );
        const failure = report.ends.find((end) => end.code !== null && end.state !== 'open');
        if (report.interrupted !== null) return { ok: false, code: 'CANCELLED', detail: `review run interrupted (${report.interrupted})`, attempts, status: report.status };
        if (failure !== undefined) {
          // A voice that failed is the lane's typed end; the run directory still records it
          // honestly, exported where the run got far enough to be exportable.
          if (EXPORTABLE.has(report.status)) await planExport({ out: runDir }, planEnv);
          // The plan run's own advice (plan next --redispatch, plan run) is not a crew's: the
          // crew's line says how to retry the lane.
          const call = failedCall(failure);
          // The detail ends with its stderr's last line: the lane's line shows it last, after the retry command.
          return { ok: false, code: failure.code, detail: `${failure.phase} ${failure.voice} voice ${failure.state} (${failure.code})${stderrSuffix(call)}`, attempts, status: report.status, ...(call === null ? {} : { call }) };
        }
        if (report.stopped !== null) return { ok: false, code: 'PLAN_RUN_STOPPED', detail: context.stopDetail(report.stopped), attempts, status: report.status };
        return reviewStep(report, () => attempts);
      }, () => attempts);
    },
    async answer(runDir) {
      // The owner answers (crew answer): the crew only looks whether they did.
      if (settings.answer === OWNER_ANSWERS) return step(async () => ownerGate(runDir, planEnv), () => 0);
      return step(async () => {
        const located = locateRun(runDir, planEnv);
        const { record } = located;
        if (record.state !== 'gate_pending' || record.gate === null) return { ok: true, code: null, detail: null, attempts: 0, status: record.state };
        const answered = await answerRun(located, { out: runDir, gateRev: record.gate.rev, reply: settings.answer, by: CREW_ANSWERER, wordsBy: CREW_ANSWERER, recHash: record.gate.rec_hash }, planEnv);
        const { report, record: after } = answered;
        // Accepted plan changes wait for a revision of the plan, which a crew does not write:
        // the lane ends here, typed, before its agent works on a plan that is not final.
        if (after.amendments.length > 0) {
          return { ok: false, code: 'PLAN_AMEND_PENDING', detail: `the answer "${settings.answer}" accepted ${after.amendments.length} plan change(s) that need a plan revision: ${after.amendments.map((a) => a.decision).join(', ')}`, attempts: 0, status: after.state };
        }
        return reviewStep(report, () => 0);
      }, () => 0);
    },
    gateDecided(runDir) {
      return gateDecided(runDir, planEnv);
    },
    async export(runDir) {
      return step(async () => reviewStep(await planExport({ out: runDir }, planEnv), () => 0), () => 0);
    },
  };
}

/**
 * A lane interrupted mid-review (a signal or the crew's --deadline) had its native voice
 * cancelled by the crew itself, with the child proven gone: a phase cannot close without
 * it, so a crew started again mints it anew (`plan next --redispatch`), as a new attempt.
 * A lane that failed on its native voice reaches here again only when it is retried
 * (--retry-failed): its failed voice is minted anew the same way, never replayed.
 */
async function redispatchCancelled(runDir: string, planEnv: PlanEnv, retry: boolean): Promise<void> {
  if (readBinding(runDir) === undefined) return;
  const review = locateRun(runDir, planEnv).record;
  if (review.state !== 'awaiting_result' || review.current === null) return;
  const id = phaseOf(review, review.current).native.attempt;
  const attempt = id === null ? undefined : attemptOf(review, id);
  if (attempt?.state === 'failed' && (retry || attempt.code === 'CANCELLED')) await planNext({ out: runDir, redispatch: attempt.id }, planEnv);
}

/**
 * The reviewer call a lane failed on, with what its supervision kept: its exit status or
 * signal and the end of its stderr. Named as the lane's story names it (`a3`). Null for an
 * attempt this run did not supervise (resumed from an earlier run: its facts are in its journal).
 */
function failedCall(end: AttemptEnd): CallEvidence | null {
  if (end.outcome === null) return null;
  return {
    call: end.attempt.slice(end.attempt.lastIndexOf('-') + 1),
    code: end.code,
    exitCode: end.outcome.child_exit,
    signal: end.outcome.signal ?? null,
    stderr: [...(end.outcome.stderr ?? [])],
  };
}

function reviewStep(report: PlanReport, attempts: () => number): ReviewStep {
  if (DRIVEN.has(report.status)) return { ok: true, code: null, detail: null, attempts: attempts(), status: report.status };
  const code = report.status === 'interrupted' ? 'CANCELLED' : 'PLAN_RUN_STOPPED';
  return { ok: false, code, detail: `review run ended ${report.status}`, attempts: attempts(), status: report.status };
}

/** A refusal or failure of a plan command becomes the lane's typed end, never a crash of the crew. */
async function step(body: () => Promise<ReviewStep>, attempts: () => number): Promise<ReviewStep> {
  try {
    return await body();
  } catch (error) {
    const code = isLanewardError(error) ? error.code : 'INTERNAL';
    return { ok: false, code, detail: toError(error).message, attempts: attempts(), status: 'refused' };
  }
}
