import { DIFF_BOUNDS, splitDiff, type DiffBounds, type LaneDiff } from '../../formats/console/lane-diff.ts';
import { git } from '../git/run-git.ts';

/** A page waits on these reads: a repository that cannot answer in time shows no diff. */
export const LANE_DIFF_TIMEOUT_MS = 5_000;

/** A commit id as laneward records them (never an option, a range or a ref name). */
const COMMIT = /^[0-9a-f]{7,64}$/;

// A read: no optional lock taken (the crew's own git commands may be running), no external
// diff or textconv command the repository's config could name, no colour, no pager.
const READ = ['--no-optional-locks', 'diff', '--no-ext-diff', '--no-textconv', '--no-color'];

/**
 * `git diff <base>...<head>` in the crew's repository (what the lane's branch changed
 * since it left the base), split per file and bounded: git's output is read to a byte
 * bound a little over the shown total, each file cut at its own bound, and the files are
 * counted from `--name-only -z` so a cut diff still says how many there are. Only commit
 * ids are passed, as argv; a lane with no head yet, or git failing, is `unavailable`.
 */
export async function readLaneDiff(input: { readonly repo: string; readonly base: string; readonly head: string | null; readonly bounds?: DiffBounds }): Promise<LaneDiff> {
  const { repo, base, head } = input;
  const bounds = input.bounds ?? DIFF_BOUNDS;
  if (head === null) return { status: 'unavailable', detail: 'the lane has no head commit yet' };
  if (!COMMIT.test(base) || !COMMIT.test(head)) return { status: 'unavailable', detail: 'the base or head is not a commit id' };
  const range = `${base}...${head}`;
  const options = { cwd: repo, timeoutMs: LANE_DIFF_TIMEOUT_MS };
  const [names, diff] = await Promise.all([
    git([...READ, '--name-only', '-z', range, '--'], options),
    git([...READ, range, '--'], { ...options, maxBuffer: bounds.total * 4 + 4_096 }),
  ]);
  const cut = diff.spawnError?.startsWith('ERR_CHILD_PROCESS_STDIO_MAXBUFFER') === true;
  if (names.status !== 0 || (diff.status !== 0 && !cut)) {
    const said = (names.status !== 0 ? names : diff).stderr.trim().split('\n').pop() ?? '';
    return { status: 'unavailable', detail: `git diff ${range} failed${said === '' ? '' : `: ${said.slice(0, 300)}`}` };
  }
  const fileCount = names.stdout.split('\0').filter((name) => name !== '').length;
  const { files } = splitDiff(diff.stdout, bounds, cut);
  return { status: 'ok', base, head, fileCount, files, cut };
}
