import { exitStatus } from '../../formats/codes/exit-status.ts';
import type { ResultCode } from '../../formats/codes/codes.ts';
import type { ControlAction } from '../../formats/crew/control.ts';
import { jsonLine, oneLine } from '../../formats/text/one-line.ts';
import { crewRequest, type CrewRequestReport } from '../crew/crew-request.ts';
import { minutesOption, usage } from './args.ts';
import { command, type Command } from './command.ts';

const COMMON = `  --by NAME   who asks, one word (recorded as human:NAME; default: $USER)
  --state DIR the crew's state root (else LANEWARD_STATE_ROOT, else .laneward/state)
  --wait TIME wait until the running crew took the request (90s, 5m...) and exit by
              what it did; without it the command exits once the request is recorded
  --json      one JSON object

Line: CREW_REQUEST: seq=<n>|- action=<action> lane=<id>|- by=human:<name>
status=requested|applied|refused [code=<CODE>] [detail=<why>]
The running crew prints CREW_CONTROL: seq=<n> action=<action> lane=<id>|- by=human:<name>
status=applied|refused [code=<CODE>] as it takes it (within about a second).
A crew run that is stopped (SIGSTOP, Ctrl-Z) is named on stderr first (CREW_REQUEST: the
crew's run (pid N) is stopped; ...): stopped inside a commit it holds the state root's
write lock, and the request is written once it runs again or ends.
Exit status: 0 recorded (with --wait: applied), 3 refused (its code: CREW_NOT_RUNNING,
LANE_UNKNOWN, LANE_NOT_RETRYABLE, CALL_NOT_RUNNING, LANE_NOT_RUNNING,
CREW_CONTROL_UNSUPPORTED), 1 --wait ran out (CONTROL_PENDING), 2 a bad command line or
crew file (USAGE, CREW_INVALID).`;

export const CREW_RETRY_HELP = `usage: laneward crew retry CREW.json --lane ID [--by NAME] [--state DIR] [--wait TIME] [--json]

Asks for one failed or interrupted lane (a cancelled one included) to run again, through
the crew's state root, so it works from another shell. A running crew drives it again at
once, from where its saved progress says, as crew run --retry-failed does for every
failed lane: new attempts, and nothing it sent before is sent again. With no crew
running the request is kept, and the next crew run on that state root takes it.
Refused: a lane that is complete, running, not started or waiting for its owner
(LANE_NOT_RETRYABLE), one the crew file does not name (LANE_UNKNOWN).

  --lane ID   the lane
${COMMON}`;

export const CREW_CANCEL_HELP = `usage: laneward crew cancel CREW.json --lane ID [--call] [--by NAME] [--state DIR] [--wait TIME] [--json]

Cancels a lane of a running crew, through its state root. The lane's running calls are
torn down by their supervisors (the process group signalled, then proven gone from
/proc) and never replayed. The lane ends failed, code=LANE_CANCELLED, wherever it was (a
lane not started yet never starts; one waiting for its owner stops waiting). With
--call only the lane's running call is cancelled: the lane ends failed,
code=CALL_CANCELLED. Either is run again with laneward crew retry CREW.json --lane ID.
Refused: no crew running (CREW_NOT_RUNNING), a lane that has ended (LANE_NOT_RUNNING),
--call on a lane with no call running (CALL_NOT_RUNNING), a queued crew
(CREW_CONTROL_UNSUPPORTED: it takes only crew stop).

  --lane ID   the lane
  --call      cancel only the lane's running call
${COMMON}`;

export const CREW_STOP_HELP = `usage: laneward crew stop CREW.json [--by NAME] [--state DIR] [--wait TIME] [--json]

Stops a running crew cleanly, as a SIGTERM to it does: every lane in flight stops where
it is, saved, its calls torn down; no other lane starts. Its summary and report say
stopped_by=operator:NAME, and it exits 143. The crew run again on that state root
continues its lanes. A queued crew takes it too. Refused: no crew running
(CREW_NOT_RUNNING).

${COMMON}`;

function controlCommand(name: 'retry' | 'cancel' | 'stop', help: string): Command {
  return command({
    name,
    help,
    options: { lane: { type: 'string' }, call: { type: 'boolean' }, by: { type: 'string' }, state: { type: 'string' }, wait: { type: 'string' }, json: { type: 'boolean' } },
    run: async ({ values, positionals }, io) => {
      if (positionals.length !== 1) throw usage(`crew ${name} takes exactly one CREW.json`);
      if (name === 'stop' && values.lane !== undefined) throw usage('crew stop stops the whole crew: it takes no --lane (crew cancel --lane ID stops one lane)');
      if (name !== 'stop' && values.lane === undefined) throw usage(`crew ${name} needs --lane ID: the lane it acts on`);
      if (name !== 'cancel' && values.call === true) throw usage('--call goes with crew cancel');
      const by = values.by ?? process.env['USER'];
      if (by === undefined || by === '') throw usage('--by NAME is required where $USER is not set: who asks, recorded with the request');
      const action: ControlAction = name === 'stop' ? 'stop' : name === 'retry' ? 'retry' : values.call === true ? 'cancel_call' : 'cancel_lane';
      const report = await crewRequest({
        file: positionals[0]!,
        cwd: process.cwd(),
        env: process.env,
        state: values.state,
        action,
        lane: values.lane ?? null,
        name: by,
        waitMs: minutesOption('wait', values.wait),
        onStoppedCrew: (pid) => io.err(stoppedCrewLine(pid)),
      });
      io.out(values.json === true ? jsonLine(requestObject(report)) : requestLine(report));
      if (report.waitedOut) return exitStatus('CONTROL_PENDING');
      return report.status === 'refused' ? exitStatus((report.code ?? 'INTERNAL') as ResultCode) : exitStatus(null);
    },
  });
}

export const crewRetryCommand = controlCommand('retry', CREW_RETRY_HELP);
export const crewCancelCommand = controlCommand('cancel', CREW_CANCEL_HELP);
export const crewStopCommand = controlCommand('stop', CREW_STOP_HELP);

function requestObject(r: CrewRequestReport): Record<string, unknown> {
  return { seq: r.seq, action: r.action, lane: r.lane, by: r.by, status: r.status, code: r.waitedOut ? 'CONTROL_PENDING' : r.code, detail: r.detail };
}

/** Said on stderr before the request is written when the crew's run is stopped. */
export function stoppedCrewLine(pid: number): string {
  return `CREW_REQUEST: the crew's run (pid ${pid}) is stopped; stopped inside a commit it holds the state root's write lock, and this request is written once it runs again (kill -CONT ${pid}) or ends`;
}

function requestLine(r: CrewRequestReport): string {
  const code = r.waitedOut ? 'CONTROL_PENDING' : r.code;
  const detail = r.detail === null ? '' : ` detail=${oneLine(r.detail)}`;
  return `CREW_REQUEST: seq=${r.seq ?? '-'} action=${r.action} lane=${oneLine(r.lane ?? '-')} by=${oneLine(r.by)} status=${r.status}${code === null ? '' : ` code=${code}`}${detail}`;
}
