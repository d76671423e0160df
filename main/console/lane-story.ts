import { RESULT_CODES, type ResultCode } from '../../formats/codes/codes.ts';
import { fixClause } from '../../formats/codes/issue.ts';
import type { LaneStory } from '../../formats/console/lane-story.ts';
import { crewQaLaneId } from '../../formats/crew/qa-id.ts';
import { isOwnerWaiting, isTerminalStage, type LaneProgress } from '../../formats/crew/record.ts';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { JournalEvent, RunRecord } from '../../formats/review/run-record.ts';
import type { LaneRecord } from '../../formats/qa/record.ts';
import { readBinding, type RunBinding } from '../plan/run-binding.ts';
import { readJournal, readLaneJournal, type Store } from '../store/store.ts';
import { agentStory } from './agent-story.ts';
import { diffStat } from './diff-stat.ts';
import { qaStory } from './qa-story.ts';
import { reviewAttempts, reviewSummary } from './review-story.ts';
import { readRunFiles, type RunFilesOptions } from './run-files.ts';
import { stageSpans } from './stage-spans.ts';
import { usd } from './story-values.ts';
import { laneCost as costOfLane } from '../crew/lane-cost.ts';
import { evidenceFix } from '../../formats/crew/call-evidence.ts';

export interface LaneStoryInput {
  readonly crew: string;
  readonly lane: string;
  /** The exact command that retries the crew's failed lanes; null when not known. */
  readonly retryCommand: string | null;
  /** The exact command that continues the crew's unfinished lanes; absent when not known. */
  readonly resumeCommand?: string | null;
  /** limits.timeout_ms: a call's budget, which under a lease runs from its last admitted mark. */
  readonly callTimeoutMs?: number;
  /** The command that answers this lane's gate for its owner (a crew whose answer policy is `owner`). */
  readonly answerCommand?: string | null;
  /** Whether no process runs the crew now (it ended, or was killed): its lanes in flight are stopped. */
  readonly crewStopped?: boolean;
  /** The lane's run directory (`<out>/<lane id>`), for a lane the store has no progress of yet. */
  readonly runDir?: string;
  /** The crew's workspace: the repository its lanes' worktrees come from and the base commit they branch at. */
  readonly workspace?: { readonly repo: string; readonly base: string } | null;
  /** Run `git diff --shortstat` for the lane's head (bounded by a timeout): the page asks, a snapshot never does. */
  readonly diffStat?: boolean;
  /** Bounds of the run directory's listing. */
  readonly files?: RunFilesOptions;
}

/**
 * One lane's whole story from what its crew recorded: its saved progress and stage
 * history, its review run's record and journal, its QA journal, its agent's turn files
 * and its run directory's files. Only reads (neither the store nor the run directory is
 * written), so it serves the crew process itself and another process on a read-only open
 * of the same state root, while the crew runs or after it ended. Undefined for a lane the
 * store has no progress of when no run directory is given either.
 */
export function readLaneStory(store: Store, input: LaneStoryInput): LaneStory | undefined {
  const progress = store.crewLanes.get([input.crew, input.lane]);
  const runDir = progress?.runDir ?? input.runDir;
  if (runDir === undefined) return undefined;
  const binding = bindingOf(runDir);
  const record = binding === undefined ? undefined : store.runs.get(binding.run);
  const journal: JournalEvent[] = record === undefined ? [] : readJournal(store, record.run);
  const qaLane = crewQaLaneId(input.crew, input.lane);
  const qa = qaStory(readLaneJournal(store, qaLane));
  const agent = progress === undefined ? undefined : agentStory(progress);
  const listed = readRunFiles(runDir, input.files);
  const stage = progress?.stage ?? 'queued';
  const code = progress?.code ?? null;
  return {
    crew: input.crew,
    lane: input.lane,
    state: stage,
    code,
    detail: progress?.detail ?? null,
    runDir,
    updatedAt: progress?.updatedAt ?? null,
    run: binding?.run ?? null,
    qaLane,
    stages: progress === undefined ? [] : stageSpans(progress),
    attempts: [...(record === undefined ? [] : reviewAttempts(record, journal)), ...qa.attempts, ...(agent?.attempts ?? [])],
    review: reviewSummary(record),
    qa: { verdicts: qa.verdicts, guidance: progress?.guidance ?? null },
    agent: agent?.agent ?? { turnsDispatched: 0, turnsDone: 0, lostTurns: [], session: null, costUsd: null, sessionUsd: null },
    workspace: workspaceOf(progress, input),
    costUsd: laneCost(record, progress),
    files: listed.files,
    filesLeftOut: listed.leftOut,
    fix: stage === 'failed' || stage === 'interrupted' ? (calledFix(progress) ?? fixOf(code)) : null,
    retry: stage === 'failed' ? input.retryCommand : null,
    failedCall: stage === 'failed' ? (progress?.failedCall ?? null) : null,
    running: runningOf(progress, input.callTimeoutMs) ?? reviewerRunning(progress, record, input.callTimeoutMs) ?? observerRunning(progress, store.lanes.get(qaLane), input.callTimeoutMs),
    owner: progress !== undefined && isOwnerWaiting(progress) ? { waiting: true, brief: briefOf(runDir), answer: input.answerCommand ?? null } : null,
    resume: stopped(stage, input.crewStopped === true) ? (input.resumeCommand ?? null) : null,
  };
}

/** Whether a lane waits for its crew to be started again: interrupted, or in flight in a crew no process runs. */
function stopped(stage: LaneProgress['stage'], crewStopped: boolean): boolean {
  return stage === 'interrupted' || (crewStopped && stage !== 'queued' && !isTerminalStage(stage));
}

/** The run directory's binding; a damaged one is shown as no run (the files still show it). */
function bindingOf(runDir: string): RunBinding | undefined {
  try {
    return readBinding(runDir);
  } catch {
    return undefined;
  }
}

function workspaceOf(progress: LaneProgress | undefined, input: LaneStoryInput): LaneStory['workspace'] {
  const branch = progress?.branch ?? null;
  const head = progress?.head ?? null;
  const worktree = progress?.worktree ?? null;
  const crew = input.workspace ?? null;
  if (crew === null && branch === null && head === null && worktree === null) return null;
  const stat = input.diffStat === true && crew !== null && head !== null ? diffStat({ repo: crew.repo, base: crew.base, head }) : null;
  return { branch, head, worktree, diffStat: stat };
}

/** Every call of the lane, as its CREW_LANE line and the crew page count it: reviewers, observers, agent turns. */
function laneCost(record: RunRecord | undefined, progress: LaneProgress | undefined): number {
  return usd(costOfLane(progress ?? {}, record?.spend ?? null).usd);
}

/** The fix clause of a result code as a crew run prints it; null for a code the table does not have. */
function fixOf(code: string | null): string | null {
  return code !== null && Object.hasOwn(RESULT_CODES, code) ? fixClause(code as ResultCode, 'laneward crew run') : null;
}

/** The fix the failed call's last stderr line names, where it is recognisable. */
function calledFix(progress: LaneProgress | undefined): string | null {
  const last = progress?.failedCall?.stderr.at(-1);
  return last === undefined ? null : evidenceFix(last);
}

/** The agent turn in flight, as its spawn was journaled; null when none runs. */
function runningOf(progress: LaneProgress | undefined, timeoutMs: number | undefined): NonNullable<LaneStory['running']> | null {
  const child = progress?.turnChild;
  if (progress === undefined || child == null || isTerminalStage(progress.stage) || progress.turnsDispatched <= progress.turnsDone) return null;
  const lease = child.mode === 'admitted_progress_inactivity' && timeoutMs !== undefined ? leaseEnd(child.at, timeoutMs) : null;
  return { call: `turn:${progress.turnsDispatched}`, pid: child.pid, since: child.at, deadlineAt: child.deadline_at, mode: child.mode, lastMarkAt: null, leaseDeadlineAt: lease };
}

/**
 * A lane in its review with a reviewer's child running: the longest-running one (of its
 * two voices, the one a stuck lane waits on), as its spawn was journaled in its run;
 * null when none runs. Named as the lane's story names the attempt (`a3`).
 */
function reviewerRunning(progress: LaneProgress | undefined, record: RunRecord | undefined, timeoutMs: number | undefined): NonNullable<LaneStory['running']> | null {
  if (progress === undefined || record === undefined || progress.stage !== 'review') return null;
  const open = Object.values(record.attempts).filter((a) => a.state === 'open' && a.child != null);
  const first = open.sort((a, b) => (a.child!.at < b.child!.at ? -1 : a.child!.at > b.child!.at ? 1 : 0))[0];
  if (first === undefined) return null;
  const child = first.child!;
  const lease = child.mode === 'admitted_progress_inactivity' && timeoutMs !== undefined ? leaseEnd(child.at, timeoutMs) : null;
  const call = first.id.startsWith(`${record.run}-`) ? first.id.slice(record.run.length + 1) : first.id;
  return { call, pid: child.pid, since: child.at, deadlineAt: child.deadline_at, mode: child.mode, lastMarkAt: null, leaseDeadlineAt: lease };
}

/**
 * A lane with an observer call running (its bootstrap, a cadence check, its cross-check):
 * the child its QA record journaled at the spawn, the earliest of its calls still reserved;
 * null when none runs or the lane ended.
 */
function observerRunning(progress: LaneProgress | undefined, qa: LaneRecord | undefined, timeoutMs: number | undefined): NonNullable<LaneStory['running']> | null {
  if (progress === undefined || qa === undefined || isTerminalStage(progress.stage)) return null;
  const spawned = (qa.reserved ?? []).filter((r) => r.child !== undefined).sort((a, b) => a.call - b.call)[0];
  if (spawned === undefined) return null;
  const child = spawned.child!;
  const lease = child.mode === 'admitted_progress_inactivity' && timeoutMs !== undefined ? leaseEnd(child.at, timeoutMs) : null;
  return { call: `observer:${spawned.call}`, pid: child.pid, since: child.at, deadlineAt: child.deadline_at, mode: child.mode, lastMarkAt: null, leaseDeadlineAt: lease };
}

/** When a lease renewed at `from` (ISO) ends, `timeoutMs` later; null for a time that does not parse. */
export function leaseEnd(from: string, timeoutMs: number): string | null {
  const at = Date.parse(from);
  return Number.isFinite(at) ? new Date(at + timeoutMs).toISOString() : null;
}

/** The owner brief a lane parked at its gate has beside its run; null when it could not be written. */
function briefOf(runDir: string): string | null {
  const brief = join(runDir, 'brief.md');
  return existsSync(brief) ? brief : null;
}
