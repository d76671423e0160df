import { LanewardError } from '../../formats/codes/error.ts';

// 255: the longest file name; a crew's lane ids reach 189 (formats/crew/qa-id.ts).
const LANE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/;

/**
 * A lane id names a directory under the state root (the observer's call files), so it is
 * a plain name: letters, digits, `.`, `_`, `-`, starting with a letter or digit, at most 255
 * (a file name's limit).
 */
export function checkLaneId(lane: string): string {
  if (!LANE_ID.test(lane)) {
    throw new LanewardError('USAGE', `expected --lane to be 1-255 letters, digits, '.', '_' or '-' starting with a letter or digit, got ${JSON.stringify(lane)}`, { path: '--lane' });
  }
  return lane;
}
