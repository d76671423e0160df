import { LanewardError } from '../../formats/error.ts';
import { modelFamily, parseFamilyTable, type FamilyAnswer } from '../../formats/model-family.ts';
import { tryReadBounded } from '../fs/read-bounded.ts';

/** The model family of `model`, with the table named by LANEWARD_MODEL_FAMILIES merged in. */
export function familyOf(model: string, env: NodeJS.ProcessEnv): FamilyAnswer {
  const file = env['LANEWARD_MODEL_FAMILIES'];
  if (file === undefined || file === '') return modelFamily(model);
  const read = tryReadBounded(file, 1024 * 1024);
  if (!read.ok) throw new LanewardError('USAGE', `LANEWARD_MODEL_FAMILIES: ${read.detail}`, { path: file });
  const table = parseFamilyTable(read.bytes.toString('utf8'));
  if (!table.ok) throw new LanewardError('USAGE', `LANEWARD_MODEL_FAMILIES: ${table.message}`, { path: file });
  return modelFamily(model, table.table);
}
