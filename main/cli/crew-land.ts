import { join } from 'node:path';
import { exitStatus } from '../../formats/codes/exit-status.ts';
import { issue, renderIssueLine } from '../../formats/codes/issue.ts';
import { carryLine, landLine, landSummary, landSummaryLine, trainCode, type LaneLanded } from '../../formats/crew/land-train.ts';
import { jsonLine } from '../../formats/text/one-line.ts';
import { interruptSignal } from '../interrupt.ts';
import { loadCrew } from '../crew/load-crew.ts';
import { configuredStateRoot, defaultStateRoot } from '../plan/index.ts';
import { usage } from './args.ts';
import { command } from './command.ts';

export const CREW_LAND_HELP = `usage: laneward crew land CREW.json [--state DIR] [--push REMOTE] [--json]

The controller's merge train: lands the crew's complete lanes with current ship receipts
on the crew's base branch, one at a time, in dependency order (a lane after the lanes its
exported tasks.jsonl depends_on names: their lane ids, task ids or pr labels; otherwise
crew file order). For each lane, in a scratch worktree <out>/.land/<lane> (never your
checkout, never the lane's worktree): the lane is rebased (or merged: "land": {"mode":
"merge"} in the crew file) onto the base's current tip; when the product diff's patch id
(git patch-id --verbatim) is unchanged its receipt is carried to the new tip (ship-run.json
gains carried_from, carry_reason and a carry object with the git range-diff), else the lane
is refused; then the crew's "pregate" checks run at the merged tree (deadline guarded, into
<out>/<lane>/land/pregate.json; not again at a tree the lane's own pregate passed at); then
the lane's branch moves to the new tip and the base by one fast-forward (git update-ref
with the value read before, never a force), and the next lane starts from the new tip.
A lane that does not land leaves the base where it was.

  --state DIR      the state root the crew ran on (else LANEWARD_STATE_ROOT, else
                   .laneward/state): which lanes are complete, and their run directories
  --push REMOTE    push each landed lane's branch with
                   --force-with-lease=refs/heads/<branch>:<its tip on REMOTE before the
                   rebase>, and at the end the base as a fast-forward (a remote name
                   or URL; a base the remote moved on by itself: LAND_PUSH_REJECTED)
  --json           one JSON object per CARRY and LAND line and a {"summary": ...} object

The base is "land": {"base": BRANCH} in the crew file, else the workspace's base when it
names a local branch, else the branch the repository's HEAD is on; it must not be checked
out in any worktree, nor may a lane's branch (laneward crew clean CREW.json removes the
lanes' worktrees and keeps their branches) (LAND_CHECKED_OUT).

Lines, per lane in the train's order:
CARRY: carried from <old 12> to <new 12> (<reason>) | CARRY: current | CARRY: refused (RECEIPT_CARRY_PRODUCT_CHANGED)
LAND: lane=<id> status=landed|conflict|refused|check_failed from=<12>|- to=<12>|- [code=<CODE>]
then LAND_SUMMARY: lanes=<n> landed=<n> conflict=<n> refused=<n> check_failed=<n> base=<12>
(from: the lane's tip before the train; to: its tip on the base). Codes: LAND_CONFLICT (it
does not apply cleanly), RECEIPT_CARRY_PRODUCT_CHANGED (its diff changed), LAND_CHECK_FAILED
(a check failed on the merged tree), LAND_LEASE_REJECTED (the remote's branch moved),
QUEUE_RECEIPT_STALE (the receipt's head is not the branch's tip), LAND_NOT_READY (not
complete, no receipt, or a lane it depends on did not land), LAND_CHECKED_OUT; each also
one error line on stderr. A lane that does not land stays as it was, to go back to its
agent (crew run --retry-failed after fixing its branch).
The train's progress is git's: killed at any instant, the base is at a lane boundary, and
the same command goes on (a lane whose tip is in the base is landed, and not again).
Exit status: 0 every lane landed, 1 a conflict, a failed check or a rejected push
(LAND_CONFLICT, LAND_CHECK_FAILED, LAND_LEASE_REJECTED, LAND_PUSH_REJECTED), 3 a lane
refused (RECEIPT_CARRY_PRODUCT_CHANGED, QUEUE_RECEIPT_STALE, LAND_NOT_READY,
LAND_CHECKED_OUT) or the out directory in use by a crew or train (CREW_BUSY), 2 a bad
crew file or command line (CREW_INVALID, USAGE, LAND_BASE_UNKNOWN).`;

export const crewLandCommand = command({
  name: 'land',
  help: CREW_LAND_HELP,
  options: { state: { type: 'string' }, push: { type: 'string' }, json: { type: 'boolean' } },
  run: async ({ values, positionals }, io) => {
    if (positionals.length !== 1) throw usage('crew land takes exactly one CREW.json');
    if (values.push !== undefined && (values.push === '' || values.push.startsWith('-'))) throw usage(`--push: ${JSON.stringify(values.push)} is not a remote name or URL`);
    const loaded = loadCrew(positionals[0]!, process.cwd());
    const root = configuredStateRoot(values.state, process.env, process.cwd())?.path ?? defaultStateRoot(process.cwd());
    const { openStore } = await import('../store/store.ts');
    const store = openStore(root, { readOnly: true });
    const { landTrain } = await import('../land/land-train.ts');
    const json = values.json === true;
    const interrupt = interruptSignal();
    try {
      const result = await landTrain({
        loaded,
        store,
        push: values.push ?? null,
        cancel: interrupt.signal,
        onCarry: (c) => io.out(json ? jsonLine(c) : carryLine(c)),
        onLane: (l) => {
          io.out(json ? jsonLine({ kind: 'land', ...l }) : landLine(l));
          if (l.code !== null) io.err(renderIssueLine('laneward crew land', issue(l.code, join(loaded.out, l.lane), laneDetail(l))));
        },
      });
      const summary = landSummary(result.lanes, result.base);
      io.out(json ? jsonLine({ summary: { ...summary, branch: result.branch } }) : landSummaryLine(summary));
      const push = result.pushFailure;
      if (push !== null) io.err(renderIssueLine('laneward crew land', issue(push.code, push.path, push.message)));
      // A rejected push is a failure (1): it outranks lanes only refused (3).
      const code = trainCode(result.lanes);
      return exitStatus(push !== null && (code === null || exitStatus(code) === 3) ? push.code : code);
    } finally {
      interrupt.release();
    }
  },
});

function laneDetail(l: LaneLanded): string {
  return `lane ${l.lane} ${l.status}${l.branch === null ? '' : ` on ${l.branch}`}${l.from === null ? '' : ` at ${l.from.slice(0, 12)}`}`;
}
