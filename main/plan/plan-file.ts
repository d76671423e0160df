import { LanewardError } from '../../formats/codes/error.ts';
import { parsePlan, type PlanDoc } from '../../formats/review/plan-doc.ts';
import { sha256 } from '../../formats/text/sha256.ts';
import { tryReadBounded } from '../fs/read-bounded.ts';

export const MAX_PLAN_BYTES = 4 * 1024 * 1024;

export interface PlanFile {
  readonly path: string;
  readonly text: string;
  readonly sha256: string;
  readonly doc: PlanDoc;
}

/** Reads and checks a plan: a UTF-8 regular file with both required sections. */
export function readPlanFile(path: string): PlanFile {
  const read = tryReadBounded(path, MAX_PLAN_BYTES);
  if (!read.ok) throw new LanewardError('PLAN_UNREADABLE', read.detail, { path });
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(read.bytes);
  } catch {
    throw new LanewardError('PLAN_UNREADABLE', `${path} is not UTF-8 text`, { path });
  }
  if (text.includes('\u0000')) throw new LanewardError('PLAN_UNREADABLE', `${path} holds NUL bytes (a binary file)`, { path });
  const parsed = parsePlan(text);
  if (!parsed.ok) throw new LanewardError('PLAN_SECTIONS_INVALID', `${path} lacks ${parsed.missing.map((h) => `"${h}"`).join(' and ')}`, { path });
  return { path, text, sha256: sha256(read.bytes), doc: parsed.plan };
}

/** The plan file's current sha256, or null when it cannot be read now. */
export function currentPlanSha(path: string): string | null {
  const read = tryReadBounded(path, MAX_PLAN_BYTES);
  return read.ok ? sha256(read.bytes) : null;
}
