import { availableParallelism } from 'node:os';
import { exitStatus } from '../../formats/codes/exit-status.ts';
import { crewRun, type CrewRunResult } from '../crew/crew-run.ts';
import { intOption, minutesOption, usage } from './args.ts';
import { command, group } from './command.ts';
import { interruptSignal } from '../interrupt.ts';

export const CREW_HELP = `usage: laneward crew run CREW.json [--state DIR] [--threads N] [--deadline TIME]
                         [--serve PORT] [--report FILE] [--retry-failed] [--json]

Runs every lane of a crew: each lane bootstraps its observer, reviews its plan with two
voices to the gate, answers the gate by the crew's policy, lets its agent work under QA
cadence, cross-checks the agent's finish, then exports and validates its run directory
(<out>/<lane id>). Every child (reviewer, observer, agent turn) is supervised under the
crew's signed actions, at most limits.concurrency at once across all lanes.

  --state DIR     the state root (else LANEWARD_STATE_ROOT, else .laneward/state); a crew
                  started again on the same root resumes every lane where it stopped
  --threads N     supervision worker threads (default: the machine's cores)
  --deadline TIME stop every lane after TIME: 90s, 5m, 1h, 500ms; a bare number is
                  minutes, as before (lanes end interrupted, lanes never started print
                  nothing; exit 124)
  --serve PORT    a live web view on 127.0.0.1:PORT (0: any free port; CREW_VIEW: url)
  --report FILE   the crew's JSON report, written atomically at the end
  --retry-failed  run failed lanes again, as new attempts (never replaying a started
                  call; a lane failed exporting exports again, any other re-bootstraps its
                  observer and gets its agent turns again); complete lanes are untouched
  --json          one JSON object per lane and a {"summary": ...} object

Lines: CREW_LANE: lane=<id> status=complete|failed|interrupted [code=<CODE>] attempts=<n>
turns=<n> run=<dir> [detail=<why>] as each lane ends (a failed lane's detail ends with
"; retry: laneward crew run ... --retry-failed ..."), then
CREW_SUMMARY: lanes=<n> complete=<n> failed=<n> interrupted=<n> attempts=<n> duration_s=<x>
On a terminal, stderr shows lanes by state, children running, marks/s and renewal p99.
Exit status: 0 every lane complete, 1 a lane failed (its line names the code), 2 a bad
crew file or command line (CREW_INVALID, USAGE), 3 a refused action descriptor,
124 --deadline, 128+n stopped by signal n.

The crew file (JSON): {"schema_version": 1, "crew": NAME, "out": DIR,
  "actions": {"file": F, "trust": PUB, "reviewer": A, "observer": A, "agent": A},
  "models": {"native": M, "outside": M},
  "runners": {"native": ARGV, "outside": ARGV, "observer": ARGV, "agent": ARGV},
  "answer": "rec" | "as-is" | REPLY, "limits": {"concurrency", "lanes", "spend_cap_usd",
  "agent_turns", "timeout_ms"}, "lanes": [{"id", "plan", "runners"?}] |
  "count": N, "template": {"id": "lane-{n}", "plan": "plans/{n}.md", "runners"?}}
ARGV is an array; {prompt}, {result} and {lane} are replaced inside each element, never
by a shell. Relative paths are relative to the crew file.`;

const run = command({
  name: 'run',
  help: CREW_HELP,
  options: {
    state: { type: 'string' },
    threads: { type: 'string' },
    deadline: { type: 'string' },
    serve: { type: 'string' },
    report: { type: 'string' },
    json: { type: 'boolean' },
    'retry-failed': { type: 'boolean' },
  },
  run: async ({ values, positionals }, io) => {
    if (positionals.length !== 1) throw usage('crew run takes exactly one CREW.json');
    const deadlineMs = minutesOption('deadline', values.deadline);
    const interrupt = interruptSignal();
    let result: CrewRunResult;
    try {
      result = await crewRun(
        {
          file: positionals[0]!,
          cwd: process.cwd(),
          env: process.env,
          state: values.state,
          threads: intOption('threads', values.threads, 1, 256) ?? Math.max(1, availableParallelism()),
          deadlineMs,
          serve: intOption('serve', values.serve, 0, 65_535),
          report: values.report,
          json: values.json === true,
          retryFailed: values['retry-failed'] === true,
          cancel: interrupt.signal,
        },
        io,
      );
    } finally {
      interrupt.release();
    }
    return crewExit(result);
  },
});

export const CREW = group({ name: 'crew', help: CREW_HELP, commands: [run], failure: { json: true } });

/** From the one exit table: 0 every lane complete, 124 deadline, 128+n a signal, 1 a lane failed. */
export function crewExit(result: CrewRunResult): number {
  if (result.stoppedBy === 'deadline') return exitStatus('DEADLINE_EXPIRED');
  if (result.stoppedBy !== null) return exitStatus('CANCELLED', { cancelSignal: result.stoppedBy });
  return exitStatus(result.tally.complete === result.tally.lanes ? null : 'CREW_LANE_FAILED');
}
