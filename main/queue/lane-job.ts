import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import * as v from 'valibot';
import { LanewardError } from '../../formats/codes/error.ts';
import { crewQaLaneId } from '../../formats/crew/qa-id.ts';
import { isLaneId, type LaneSpec } from '../../formats/crew/file.ts';
import { signatureFileOf } from '../actions/signature.ts';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import type { LoadedCrew } from '../crew/load-crew.ts';

/** The BullMQ queue every crew's lanes travel on. */
export const LANE_QUEUE = 'laneward-lanes';

/** The most bytes of a plan, or of the actions file, a lane job carries. */
const MAX_TEXT = 1024 * 1024;

/**
 * Everything a worker on another machine needs to run one lane, and nothing it has of its
 * own: the crew's settings, the lane's runners, the plan's text, and the signed actions
 * (the trust key is each worker's own). Paths never travel: the worker writes these under
 * its own state root.
 */
export interface LaneJobBody {
  readonly kind: 'lane';
  /** The crew's name, as its coordinator prints it. */
  readonly crew: string;
  /**
   * The name the lane runs under on a worker: one per coordinator's crew (its name, file
   * and state root), so two crews that share a name never share a job, a store key or a
   * stream.
   */
  readonly runAs: string;
  readonly lane: string;
  /** The crew file's settings that decide how a lane runs (models, answer, limits, prices, action names). */
  readonly settings: Record<string, unknown>;
  readonly runners: LaneSpec['runners'];
  readonly plan: string;
  readonly actions: { readonly text: string; readonly signature: string };
  /** A failed lane run again (crew run --queue --retry-failed): as new attempts, never a replay. */
  readonly retry?: boolean;
  /**
   * This job of the lane, one per job its coordinator queued: a worker runs it only while
   * the lane's ledger entry names it (see lane-ledger.ts), so a copy runs nothing.
   */
  readonly nonce: string;
}

const laneName = v.pipe(
  v.string(),
  v.check((id) => isLaneId(id), 'a name of letters, digits, ".", "_" or "-", not starting with ".", "_" or "-"'),
);
const bodySchema = v.strictObject({
  kind: v.literal('lane'),
  crew: laneName,
  runAs: laneName,
  lane: laneName,
  settings: v.record(v.string(), v.unknown()),
  runners: v.record(v.string(), v.unknown()),
  plan: v.pipe(v.string(), v.maxLength(MAX_TEXT)),
  actions: v.strictObject({ text: v.pipe(v.string(), v.maxLength(MAX_TEXT)), signature: v.pipe(v.string(), v.maxLength(256)) }),
  retry: v.optional(v.boolean()),
  nonce: v.pipe(v.string(), v.regex(/^[0-9a-f]{32}$/, 'a nonce of 32 hex digits')),
});

/** The job id of a lane: one per (crew as run, lane), so enqueuing a crew again adds nothing twice. */
export function laneJobId(runAs: string, lane: string): string {
  return `lane.${crewQaLaneId(runAs, lane)}`;
}

/** The name a coordinator's crew runs under on the workers: its name, file and state root, hashed. */
export function runAsName(crew: string, file: string, root: string): string {
  return `c${createHash('sha256').update(`${crew}\0${file}\0${root}`).digest('hex').slice(0, 20)}`;
}

/** The job of one lane of a loaded crew (CREW_INVALID for a plan or actions file it cannot read). */
export function laneJobBody(loaded: LoadedCrew, lane: LaneSpec, runAs: string, retry = false): Omit<LaneJobBody, 'nonce'> {
  const crew = loaded.crew;
  const read = (file: string, what: string) => {
    try {
      const bytes = readFileSync(file);
      if (bytes.length > MAX_TEXT) throw new Error(`${bytes.length} bytes, over ${MAX_TEXT}`);
      return bytes.toString('utf8');
    } catch (error) {
      throw new LanewardError('CREW_INVALID', `lane ${lane.id}: the ${what} ${file} cannot be carried to a worker (${(error as Error).message})`, { path: file });
    }
  };
  return {
    kind: 'lane',
    crew: crew.crew,
    runAs,
    lane: lane.id,
    settings: {
      models: crew.models,
      answer: crew.answer,
      limits: crew.limits,
      ...(crew.prices === undefined ? {} : { prices: crew.prices }),
      actions: { reviewer: crew.actions.reviewer, observer: crew.actions.observer, agent: crew.actions.agent },
    },
    runners: lane.runners,
    plan: read(resolve(dirname(loaded.file), lane.plan), 'plan'),
    actions: { text: read(loaded.actionsFile, 'actions file'), signature: read(signatureFileOf(loaded.actionsFile), 'actions signature') },
    ...(retry ? { retry: true } : {}),
  };
}

/**
 * A job body checked for its shape and its names, and for being the job of its lane: a
 * body under another job id is a copy (JOB_INVALID names what is wrong).
 */
export function checkLaneJob(value: unknown, jobId?: string): LaneJobBody {
  const parsed = v.safeParse(bodySchema, value);
  if (!parsed.success) {
    const issue = parsed.issues[0]!;
    const where = issue.path?.map((p) => String(p.key)).join('.') ?? 'the body';
    throw new LanewardError('JOB_INVALID', `the lane job's ${where}: ${issue.message}`);
  }
  const body = parsed.output as LaneJobBody;
  if (jobId !== undefined && jobId !== laneJobId(body.runAs, body.lane)) {
    throw new LanewardError('JOB_INVALID', `job ${jobId} carries the body of job ${laneJobId(body.runAs, body.lane)} (a copy); it ran nothing`);
  }
  return body;
}

/**
 * Writes a one-lane crew for a job under `dir` (the worker's own: its trust key, its
 * paths), and returns its crew file. The crew keeps its name, so the lane's store keys,
 * QA id and lines are the ones the coordinator knows.
 */
export function writeLaneCrew(dir: string, body: LaneJobBody, trust: string): string {
  mkdirSync(join(dir, 'plans'), { recursive: true });
  writeFileAtomic(join(dir, 'actions.json'), body.actions.text, 0o644, true);
  writeFileAtomic(signatureFileOf(join(dir, 'actions.json')), body.actions.signature, 0o644, true);
  writeFileAtomic(join(dir, 'plans', `${body.lane}.md`), body.plan, 0o644, true);
  const settings = body.settings as { actions?: Record<string, unknown> };
  const crew = {
    schema_version: 1,
    crew: body.runAs,
    out: 'runs',
    ...settings,
    actions: { ...(settings.actions ?? {}), file: 'actions.json', trust },
    runners: body.runners,
    lanes: [{ id: body.lane, plan: `plans/${body.lane}.md` }],
  };
  const file = join(dir, 'crew.json');
  writeFileAtomic(file, `${JSON.stringify(crew, null, 2)}\n`, 0o644, true);
  return file;
}
