import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import * as v from 'valibot';
import { crewFileSchema, duplicateLane, OWNER_ANSWERS, expandLanes, isLaneId, type CrewFile, type LaneSpec } from '../../formats/crew/file.ts';
import { LanewardError } from '../../formats/codes/error.ts';
import { describeKeyIssues } from '../../formats/schemas/key-issues.ts';
import { jsonSyntaxText, parseJson } from '../../formats/text/json-text.ts';
import { replyFormProblem } from '../../formats/gate/reply.ts';
import { tryReadBounded } from '../fs/read-bounded.ts';
import { checkWorkspace, type LoadedWorkspace } from './check-workspace.ts';
import { lanePlanOrder } from './plan-order.ts';
import type { LaneOrder } from '../../formats/crew/lane-order.ts';

const MAX_CREW_BYTES = 4 * 1024 * 1024;

/** A crew file read, checked and expanded, with every path resolved against its directory. */
export interface LoadedCrew {
  readonly file: string;
  readonly crew: CrewFile;
  readonly lanes: readonly LaneSpec[];
  /** Absolute: the lanes' run directories are `<out>/<lane id>`. */
  readonly out: string;
  readonly actionsFile: string;
  readonly trustFile: string;
  /** The crew's git workspace, checked and its base resolved to one commit; null when it names none. */
  readonly workspace: LoadedWorkspace | null;
  /** `"overlap": "order"`: the lanes each lane may not run beside, from their plans' files; null: every lane runs beside every other. */
  readonly order: LaneOrder | null;
}

const invalid = (file: string, message: string) => new LanewardError('CREW_INVALID', message, { path: file });

/**
 * Refuses a crew before any lane starts: one bad lane would otherwise surface an hour
 * in, after the others spent their budget.
 */
export function loadCrew(path: string, cwd: string): LoadedCrew {
  const file = resolve(cwd, path);
  const read = tryReadBounded(file, MAX_CREW_BYTES);
  if (!read.ok) throw invalid(file, `the crew file ${read.detail}`);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(read.bytes);
  } catch {
    throw invalid(file, 'the crew file is not UTF-8 text');
  }
  const json = parseJson(text);
  if (!json.ok) throw invalid(file, `the crew file is not one JSON document (${jsonSyntaxText(json)})`);
  const parsed = v.safeParse(crewFileSchema, json.value);
  if (!parsed.success) throw invalid(file, describeKeyIssues(crewFileSchema, parsed.issues));
  const crew = parsed.output;
  // The standing answer is the same for every lane: a reply that cannot parse would fail
  // each lane at its gate, after its review was paid for.
  const problem = crew.answer === OWNER_ANSWERS ? null : replyFormProblem(crew.answer);
  if (problem !== null) throw invalid(file, `answer: ${JSON.stringify(crew.answer)} is not a gate reply (${problem})`);
  const base = dirname(file);
  const lanes = expandLanes(crew).map((lane) => ({ ...lane, plan: resolve(base, lane.plan) }));
  const badId = lanes.find((lane) => !isLaneId(lane.id));
  if (badId !== undefined) throw invalid(file, `the template makes lane id ${JSON.stringify(badId.id)}, which is not a valid lane id`);
  const twice = duplicateLane(lanes);
  if (twice !== null) throw invalid(file, `lane id ${JSON.stringify(twice)} is named twice`);
  for (const lane of lanes) {
    if (statSync(lane.plan, { throwIfNoEntry: false })?.isFile() !== true) {
      throw invalid(file, `lane ${lane.id}: plan ${lane.plan} is not a readable file`);
    }
  }
  const out = resolve(base, crew.out);
  const outStat = statSync(out, { throwIfNoEntry: false });
  if (outStat !== undefined && !outStat.isDirectory()) throw invalid(file, `out: ${out} exists and is not a directory`);
  // The checks run in each lane's worktree at its head: a crew without one has neither.
  if (crew.pregate !== undefined && crew.workspace === undefined) throw invalid(file, 'pregate: the checks run in each lane\'s worktree at its head, and the crew file names no workspace');
  // A plan's files are repository paths: a crew with no repository has none to order by.
  if (crew.overlap === 'order' && crew.workspace === undefined) throw invalid(file, 'overlap: "order" orders lanes by the repository files their plans name, and the crew file names no workspace');
  const workspace = crew.workspace === undefined ? null : checkWorkspace(file, base, crew.workspace, crew.crew, lanes.map((lane) => lane.id));
  return {
    file,
    crew,
    lanes,
    out,
    actionsFile: resolve(base, crew.actions.file),
    trustFile: resolve(base, crew.actions.trust),
    workspace,
    order: crew.overlap === 'order' ? lanePlanOrder(lanes) : null,
  };
}
