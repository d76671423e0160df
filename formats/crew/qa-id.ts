/**
 * A crew lane's id in the QA store, one-to-one with its (crew, lane) pair: the crew's own
 * dots are doubled, then one dot, then the lane. Read left to right, `..` is a dot of the
 * crew and a single `.` ends the crew (a lane never starts with `.`), so no two pairs
 * share an id: crew `x` lane `y.z` is `x.y.z`, crew `x.y` lane `z` is `x..y.z`. A crew
 * whose name has no dot keeps the id it always had, `<crew>.<lane>`.
 */
export function crewQaLaneId(crew: string, lane: string): string {
  return `${crew.replaceAll('.', '..')}.${lane}`;
}

/** The (crew, lane) pair of an id made by {@link crewQaLaneId}, or null for any other string. */
export function splitCrewQaLaneId(id: string): { crew: string; lane: string } | null {
  let crew = '';
  for (let i = 0; i < id.length; i++) {
    const char = id[i]!;
    if (char !== '.') {
      crew += char;
      continue;
    }
    if (id[i + 1] === '.') {
      crew += '.';
      i += 1;
      continue;
    }
    const lane = id.slice(i + 1);
    return crew === '' || lane === '' || lane.startsWith('.') ? null : { crew, lane };
  }
  return null;
}

/** The longest id: a crew and a lane of 63 characters each, the crew all dots but its first. */
export const CREW_QA_LANE_ID_MAX = 63 + 62 + 1 + 63;
