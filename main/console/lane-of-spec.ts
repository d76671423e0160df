import { isAbsolute, relative, sep } from 'node:path';
import { splitCrewQaLaneId } from '../../formats/crew/qa-id.ts';
import type { SupervisionSpec } from '../../workers/supervise/spec.ts';

/**
 * The crew lane a supervised child works for, from what its spec already carries: an
 * observer call names its QA lane; a reviewer or an agent turn reads its prompt from the
 * lane's run directory, `<out>/<lane id>/…`. Undefined for anything else.
 */
export function laneOfSpec(spec: Pick<SupervisionSpec, 'env'>, crew: string, out: string): string | undefined {
  const env = spec.env ?? {};
  const qa = env['LANEWARD_QA_LANE'];
  if (qa !== undefined) {
    const pair = splitCrewQaLaneId(qa);
    return pair !== null && pair.crew === crew ? pair.lane : undefined;
  }
  const prompt = env['LANEWARD_PROMPT_FILE'];
  if (prompt === undefined) return undefined;
  const inside = relative(out, prompt);
  if (inside === '' || inside.startsWith('..') || isAbsolute(inside)) return undefined;
  return inside.split(sep)[0];
}
