import { exitStatus } from '../../formats/codes/exit-status.ts';
import { jsonLine, oneLine } from '../../formats/text/one-line.ts';
import { crewClean, type CleanedWorktree } from '../crew/crew-clean.ts';
import { loadCrew } from '../crew/load-crew.ts';
import { usage } from './args.ts';
import { command } from './command.ts';

export const CREW_CLEAN_HELP = `usage: laneward crew clean CREW.json [--force] [--json]
       laneward crew clean CREW.json --queue redis://HOST:PORT [--state DIR] [--json]

Removes the git worktrees a crew's lanes left under its out (<out>/<lane id>/worktree,
in the repository the crew file's "workspace" names), whichever way each lane ended,
leftovers of a killed crew included, then runs git worktree prune. Branches
(laneward/<crew>/<run id>/<lane id>) are always kept: they hold the lanes' commits. Worktrees
elsewhere are never touched. A crew running in the same out refuses the clean (CREW_BUSY).

  --force   remove worktrees with uncommitted changes (tracked, deleted or untracked
            files; ignored files never count) and locked ones too; without it they are kept
  --json    one JSON object per worktree and a {"summary": ...} object

Lines, sorted by lane: CREW_CLEAN: lane=<id> worktree=<path> status=removed|pruned|kept
[code=<CODE>] [reason=<why>] (pruned: its directory was already gone), then
CREW_CLEAN_SUMMARY: worktrees=<n> removed=<n> kept=<n>
Exit status: 0 every worktree removed (or none left), 1 some kept because git failed
(WORKSPACE_FAILED), 2 a bad crew file, one naming no workspace, or a bad command line
(CREW_INVALID, USAGE), 3 some kept for uncommitted changes or a lock (WORKSPACE_DIRTY),
or a crew running in the same out (CREW_BUSY).

With --queue: removes from that Redis what the crew, as run by crew run --queue on the
state root --state names, left there: each lane's finished job, its mirror and its
ledger entry. A job still queued or running is kept (code=CREW_BUSY). The coordinator's
state root keeps the lanes' results, so the same crew run --queue afterwards starts
nothing complete. Lines, by lane: CREW_CLEAN: lane=<id> job=<id>
status=removed|absent|kept state=<job state> [code=CREW_BUSY], then
CREW_CLEAN_SUMMARY: jobs=<n> removed=<n> kept=<n>. Exit status: 0 nothing kept, 1 Redis
unreachable (QUEUE_UNAVAILABLE), 3 a job kept or a crew running in the same out (CREW_BUSY).`;

export const crewCleanCommand = command({
  name: 'clean',
  help: CREW_CLEAN_HELP,
  options: { force: { type: 'boolean' }, json: { type: 'boolean' }, queue: { type: 'string' }, state: { type: 'string' } },
  run: async ({ values, positionals }, io) => {
    if (positionals.length !== 1) throw usage('crew clean takes exactly one CREW.json');
    if (values.queue === undefined && values.state !== undefined) throw usage('--state goes with --queue');
    if (values.queue !== undefined && values.force === true) throw usage('--force is for worktrees; --queue never removes a job still queued or running');
    const loaded = loadCrew(positionals[0]!, process.cwd());
    const json = values.json === true;
    if (values.queue !== undefined) {
      const { cleanQueue } = await import('../queue/queue-clean.ts');
      const jobs = await cleanQueue(loaded, { queue: values.queue, state: values.state, env: process.env, cwd: process.cwd() });
      for (const j of jobs) io.out(json ? jsonLine(j) : `CREW_CLEAN: lane=${j.lane} job=${oneLine(j.job)} status=${j.status} state=${j.state}${j.status === 'kept' ? ' code=CREW_BUSY' : ''}`);
      const kept = jobs.filter((j) => j.status === 'kept').length;
      const summary = { jobs: jobs.length, removed: jobs.filter((j) => j.status === 'removed').length, kept };
      io.out(json ? jsonLine({ summary }) : `CREW_CLEAN_SUMMARY: jobs=${summary.jobs} removed=${summary.removed} kept=${summary.kept}`);
      return exitStatus(kept === 0 ? null : 'CREW_BUSY');
    }
    const done = await crewClean(loaded, { force: values.force === true });
    for (const w of done) io.out(json ? jsonLine(w) : cleanLine(w));
    const removed = done.filter((w) => w.status !== 'kept').length;
    const summary = { worktrees: done.length, removed, kept: done.length - removed };
    io.out(json ? jsonLine({ summary }) : `CREW_CLEAN_SUMMARY: worktrees=${summary.worktrees} removed=${summary.removed} kept=${summary.kept}`);
    return cleanExit(done);
  },
});

function cleanLine(w: CleanedWorktree): string {
  const code = w.code === null ? '' : ` code=${w.code}`;
  const reason = w.reason === null ? '' : ` reason=${oneLine(w.reason)}`;
  return `CREW_CLEAN: lane=${oneLine(w.lane)} worktree=${oneLine(w.worktree)} status=${w.status}${code}${reason}`;
}

/** From the one exit table: a worktree kept because git failed outranks one kept for its changes. */
function cleanExit(done: readonly CleanedWorktree[]): number {
  const kept = done.filter((w) => w.status === 'kept');
  if (kept.length === 0) return exitStatus(null);
  const failure = kept.find((w) => w.code !== 'WORKSPACE_DIRTY');
  return exitStatus(failure === undefined ? 'WORKSPACE_DIRTY' : 'WORKSPACE_FAILED');
}
