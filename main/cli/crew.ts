import { availableParallelism } from 'node:os';
import { exitStatus } from '../../formats/codes/exit-status.ts';
import { crewRun, type CrewRunResult } from '../crew/crew-run.ts';
import { crewStatus, crewView } from './crew-console.ts';
import { crewPrinter } from './crew-lines.ts';
import { crewWorkerCommand } from './crew-worker.ts';
import { crewAnswerCommand } from './crew-answer.ts';
import { crewLandCommand } from './crew-land.ts';
import { crewCleanCommand } from './crew-clean.ts';
import { crewCancelCommand, crewRetryCommand, crewStopCommand } from './crew-control.ts';
import { intOption, minutesOption, usage } from './args.ts';
import { command, group } from './command.ts';
import { interruptSignal } from '../interrupt.ts';
import { startRehearsal } from '../rehearse/rehearsal.ts';

export const CREW_HELP = `usage: laneward crew run CREW.json [--state DIR] [--threads N] [--deadline TIME]
                         [--serve PORT] [--report FILE] [--retry-failed] [--stuck-after TIME]
                         [--owner-wait TIME]
                         [--queue redis://HOST:PORT --key KEY [--queue-timeout TIME]] [--rehearse]
                         [--json]

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
  --serve PORT    the console on 127.0.0.1:PORT (0: any free port; CREW_VIEW: url?token=T):
                  the crew page (failed and stuck lanes first, the gate inbox),
                  /lanes/<id> for each lane's story and diff, /snapshot.json,
                  /lanes/<id>.json, /events (deltas). The URL's token lets its page act:
                  retry, cancel and stop as crew retry|cancel|stop do, answer gates as
                  crew answer does; POST /actions/* only, with the token, this origin
                  and a JSON body (refusals: CONSOLE_TOKEN_MISSING, CONSOLE_TOKEN_WRONG,
                  CONSOLE_ORIGIN_REFUSED, CONSOLE_BODY_INVALID)
  --stuck-after TIME  a running lane with no admitted progress mark nor saved change for
                  longer is shown as stuck (default 2m)
  --queue URL     run the lanes on laneward crew worker processes (any machines) through
                  Redis: one job per lane, signed with --key (an Ed25519 private key; the
                  workers trust its public half), each lane's run directory carried back
                  into out and validated here; the same lines and exit statuses. Redis
                  unreachable at the start, or for --queue-timeout (default 10s) later, is
                  QUEUE_UNAVAILABLE (exit 1): the lanes run on, and the same command later
                  picks up their results. Its state root keeps a copy of every lane's
                  mirror: a job Redis lost is queued again from it (CREW_REQUEUED on
                  stderr), and a lane it holds finished is not queued at all. Not with a
                  crew that names a workspace.
  --report FILE   the crew's JSON report, written atomically at the end
  --retry-failed  run failed lanes again, as new attempts (never replaying a started
                  call; a lane failed exporting exports again, any other re-bootstraps its
                  observer and gets its agent turns again); complete lanes are untouched
  --rehearse      try the crew with no key and no spend: a model server of laneward's own
                  on 127.0.0.1 answers every preset runner (claude-code, codex,
                  gemini-cli; each gets a private HOME and config under
                  <state>/rehearsal/, a fake key and the server's URL), and its replies
                  make each agent run one shell command with its CLI's own tool in its
                  lane's worktree; argv runners run as written. The crew runs as
                  <crew>-rehearsal into <out>-rehearsal (branches
                  laneward/<crew>-rehearsal/<run id>/<lane id>), so the real run afterwards starts
                  every lane; CREW_REHEARSAL: model_server=<url> on stderr. Not with --queue.
  --owner-wait TIME  with "answer": "owner", how long the crew waits for the owner's
                  answers once only lanes waiting at their gates are left (default 0: it
                  ends then, and a crew run again after the answers continues them);
                  while other lanes run, an answer (laneward crew answer) is taken at once
  --json          one JSON object per lane and a {"summary": ...} object

Lines: CREW_LANE: lane=<id> status=complete|failed|interrupted|waiting [code=<CODE>] attempts=<n>
turns=<n> cost_usd=<x> unpriced=<n> run=<dir> [call_codes=<call>:<CODE>,...]
[detail=<why>] as each lane ends (cost_usd: its reviewers', observers' and agent's calls,
claude's own figure and the others' tokens at "prices"; unpriced: its calls of unknown
cost; call_codes: its supervised calls, a3, observer:<n>, turn:<n>, that ended with a
code, even where their result stood, as PROVIDER_NO_EXIT; the first eight, then +<n>; the
report's lanes list them all as call_codes; a failed lane's detail ends with
"; retry: laneward crew run ... --retry-failed ...", then, when the call it failed on
wrote to stderr, "; stderr: <its last line>" (escaped, bounded; --json and the report:
failed_call with its exit_code, signal and last stderr lines); an interrupted lane's
detail ends with "; resume: laneward crew run ... --state ...", the command that
continues it; a lane waiting for its owner (status=waiting code=CREW_OWNER_PENDING) with
"; answer: laneward crew answer ..."), then
CREW_SUMMARY: lanes=<n> complete=<n> failed=<n> interrupted=<n> [waiting=<n>] attempts=<n> duration_s=<x>
(waiting=<n> only when lanes wait for their owner, then CREW_ANSWER: <the command that
answers them all>)
On a terminal, stderr shows a live region under those lines, cut to its width: lanes by
state, attempts running and queued, lanes/min and ETA, spend against the cap, providers
paused by rate limits, marks/s and renewal p99, then failed, stuck and interrupted
lanes (and, for a crew that ends interrupted, the command that continues it).
Exit status: 0 every lane complete, 1 a lane failed (its line names the code), 2 a bad
crew file or command line (CREW_INVALID, USAGE), 3 a refused action descriptor, a
required sandbox that cannot be had (SANDBOX_UNAVAILABLE), or
lanes waiting for their owner and none failed (CREW_OWNER_PENDING),
124 --deadline, 128+n stopped by signal n (143 stopped by laneward crew stop).
While it runs, an operator acts on it from any shell through its state root: laneward
crew retry CREW.json --lane ID, crew cancel CREW.json --lane ID [--call], crew stop
CREW.json (see their --help); it takes each request within about a second and prints
CREW_CONTROL: seq=<n> action=retry|cancel_call|cancel_lane|stop lane=<id>|- by=human:<name>
status=applied|refused [code=<CODE>] [detail=<why>]. A retry recorded while no crew ran
is taken as it starts.

The crew file (JSON): {"schema_version": 1, "crew": NAME, "out": DIR,
  "actions": {"file": F, "trust": PUB, "reviewer": A, "observer": A, "agent": A},
  "models": {"native": M, "outside": M},
  "runners": {"native": RUNNER, "outside": RUNNER, "observer": RUNNER, "agent": RUNNER},
  "answer": "rec" | "as-is" | "owner" | REPLY, "limits": {"concurrency", "lanes", "spend_cap_usd",
  "reserve_usd", "agent_turns", "timeout_ms", "max_file_bytes", "max_turn_bytes"}, "prices"?: {MODEL: {"input", "output",
  "cached_input"?}} (USD per million tokens), "lanes": [{"id", "plan", "runners"?}] |
  "count": N, "template": {"id": "lane-{n}", "plan": "plans/{n}.md", "runners"?},
  "workspace"?: {"repo": DIR, "base"?: REF},
  "pregate"?: [{"argv": ARGV, "id"?: ID, "tier"?: TEXT, "timeout_ms"?: N}],
  "land"?: {"mode"?: "rebase" | "merge", "base"?: BRANCH},
  "overlap"?: "parallel" | "order",
  "sandbox"?: "auto" | "required" | "off"}
A RUNNER is an ARGV or a provider preset. ARGV is an array; {prompt}, {result} and
{lane} are replaced inside each element, never by a shell. A preset is {"preset":
"claude-code" | "codex" | "gemini-cli", "model"?: M, "args"?: [..], "env"?: {NAME: VALUE},
"bin"?: PATH, "first_event_ms"?: N}: the CLI runs non-interactively with the prompt on
stdin and its own stream renewing the lease; "model" is passed to it, "args" are appended
to its own, "env" is added to its environment (no LANEWARD_ names), "bin" names the
program when it is not found on PATH, in node_modules/.bin or laneward's CLI cache
(laneward providers), and a call with no event within "first_event_ms" (default: the
signed action's, else 60000) ends PROVIDER_NO_START. A lane's "runners" replace the
crew's, role by role. Relative paths are relative to the crew file. "workspace" names a
git work
tree; its base (any commit-ish, default HEAD) is resolved to one commit when the file is
loaded, and each lane gets the worktree <out>/<lane id>/worktree on branch
laneward/<crew>/<run id>/<lane id>, made at that commit: the run id is minted at the
crew's first start on its state root and kept there, so a crew started again continues
its own branches and the same crew on another state root starts new ones from its base.
"sandbox" (default "auto") keeps a preset agent in a worktree to its lane: its calls run
under bubblewrap, writable only its worktree, its CLI's own directories (~/.claude,
CODEX_HOME or ~/.codex, ~/.gemini; HOME itself read-only) and a private TMPDIR
(<out>/<lane>/agent/tmp unless the runner sets one), the repository, its git dir (refs,
index, objects), the crew's out and everything else read-only; laneward commits each turn
itself. The crew's first stderr line says CREW_SANDBOX: sandbox=bwrap program=<path>, or
sandbox=none|off reason=<why>; agents run uncontained. "required" refuses a crew without
it (SANDBOX_UNAVAILABLE, exit 3); "off" never uses it. Argv agents run as written.
"pregate" (needs "workspace") names the repository's checks: when a lane's agent reports
finish, before its cross-check, each argv runs (never by a shell) in its worktree at its head under a deadline
("timeout_ms", default limits.timeout_ms), into <out>/<lane>/pregate.json and a line
PREGATE: lane=<id> status=pass|fail head=<12> tree=<12> checks=<n> failed=<ids>|- ms=<n> file=<path>.
A failed check goes back to the agent as guidance while it has turns left, else the lane
fails PREGATE_FAILED. A lane that passed writes ship-run.json and ship-receipt.md in its
run directory, bound to its head, and prints
SHIP_RECEIPT: lane=<id> head=<12> base=<12> tree=<12> branch=<b> spend_usd=<x> session_kind=<k>
GSTACK_RESULT: skill=ship status=complete run=<run dir>
before its CREW_LANE line (--json: one object per event, "kind" pregate or receipt).
"overlap": "order" (needs "workspace"; default "parallel") runs a lane whose plan names
a file an earlier lane's plan names (a "Files:" line under an item) only after that lane
ended; lanes sharing no file keep the concurrency. Before any lane starts, each lane that
waits prints LANE_ORDER: lane=<id> after=<earlier lanes> files=<shared files>.
"spend_cap_usd" caps the whole crew (every call of every lane, and its earlier runs): a
call starts only while what was spent, what calls in flight hold ("reserve_usd" each,
default 0.50) and the calls of unknown cost (counted at "reserve_usd" for good) leave
room for it; else it waits for a call in flight to end, or is SPEND_CAP_EXCEEDED.
A lane's head= is its branch's tip after each turn, whoever committed. A turn that adds a
file over "max_file_bytes" (default 10 MiB), or more than "max_turn_bytes" in all
(default 100 MiB), counting the agent's own commits, is WORKSPACE_TOO_LARGE with the file
named: nothing of it is committed, and commits the agent made are taken off the branch
(git reset --mixed: its files stay in the worktree).

"answer": "owner" leaves every gate to the owner (laneward crew answer --help); not with
--queue (CREW_INVALID).
laneward crew land CREW.json [--push REMOTE] lands the complete lanes on the base, one
fast-forward each (see laneward crew land --help).
laneward crew clean CREW.json [--force] [--json] removes the worktrees the lanes left,
and with --queue URL what a queued crew left in Redis (see laneward crew clean --help). laneward crew status CREW.json and laneward crew view
CREW.json --serve PORT show a crew from its state root, finished or running elsewhere.`;

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
    'stuck-after': { type: 'string' },
    'owner-wait': { type: 'string' },
    queue: { type: 'string' },
    key: { type: 'string' },
    'queue-timeout': { type: 'string' },
    rehearse: { type: 'boolean' },
  },
  run: async ({ values, positionals }, io) => {
    if (positionals.length !== 1) throw usage('crew run takes exactly one CREW.json');
    if (values.rehearse === true && values.queue !== undefined) throw usage('--rehearse runs the crew here, against a model server on loopback that queue workers cannot reach; drop --queue');
    const deadlineMs = minutesOption('deadline', values.deadline);
    if (values.queue === undefined && (values.key !== undefined || values['queue-timeout'] !== undefined)) throw usage('--key and --queue-timeout go with --queue');
    if (values.queue !== undefined && values.key === undefined) throw usage('--queue needs --key KEY: the private key the lanes\' jobs are signed with');
    const queueTimeoutMs = minutesOption('queue-timeout', values['queue-timeout']);
    const interrupt = interruptSignal();
    const rehearsal = values.rehearse === true ? await startRehearsal() : undefined;
    if (rehearsal !== undefined) io.err(`CREW_REHEARSAL: model_server=${rehearsal.url}`);
    let result: CrewRunResult;
    try {
      const common = {
          file: positionals[0]!,
          cwd: process.cwd(),
          env: process.env,
          state: values.state,
          threads: intOption('threads', values.threads, 1, 256) ?? Math.max(1, availableParallelism()),
          deadlineMs,
          serve: intOption('serve', values.serve, 0, 65_535),
          report: values.report,
          retryFailed: values['retry-failed'] === true,
          ...(values['stuck-after'] === undefined ? {} : { stuckAfterS: minutesOption('stuck-after', values['stuck-after'])! / 1000 }),
          ...(values['owner-wait'] === undefined ? {} : { ownerWaitMs: minutesOption('owner-wait', values['owner-wait'])! }),
          cancel: interrupt.signal,
          ...(rehearsal === undefined ? {} : { rehearse: { apply: rehearsal.apply, args: ['--rehearse'] } }),
      };
      const output = crewPrinter(io, values.json === true);
      if (values.queue !== undefined) {
        const { crewRunQueued } = await import('../queue/crew-queue.ts');
        result = await crewRunQueued({ ...common, queue: values.queue, key: values.key!, ...(queueTimeoutMs === undefined ? {} : { queueTimeoutMs }) }, output);
      } else result = await crewRun(common, output);
    } finally {
      interrupt.release();
      await rehearsal?.close();
    }
    return crewExit(result);
  },
});

export const CREW = group({ name: 'crew', help: CREW_HELP, commands: [run, crewCleanCommand, crewView, crewStatus, crewAnswerCommand, crewRetryCommand, crewCancelCommand, crewStopCommand, crewLandCommand, crewWorkerCommand], failure: { json: true } });

/** From the one exit table: 0 every lane complete, 124 deadline, 128+n a signal, 1 a lane failed. */
export function crewExit(result: CrewRunResult): number {
  if (result.stoppedBy === 'deadline') return exitStatus('DEADLINE_EXPIRED');
  if (result.stoppedBy !== null) return exitStatus('CANCELLED', { cancelSignal: result.stoppedBy });
  if (result.tally.complete === result.tally.lanes) return exitStatus(null);
  // A failed or interrupted lane outranks lanes that only wait for their owner.
  return exitStatus(result.tally.complete + result.tally.waiting === result.tally.lanes ? 'CREW_OWNER_PENDING' : 'CREW_LANE_FAILED');
}
