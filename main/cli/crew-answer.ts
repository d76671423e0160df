import { exitStatus, planExitStatus } from '../../formats/codes/exit-status.ts';
import type { ResultCode } from '../../formats/codes/codes.ts';
import { jsonLine, oneLine } from '../../formats/text/one-line.ts';
import { crewAnswer, type LaneAnswer } from '../crew/crew-answer.ts';
import { usage } from './args.ts';
import { command } from './command.ts';

export const CREW_ANSWER_HELP = `usage: laneward crew answer CREW.json (--lane ID | --all) --reply REPLY --by NAME [--state DIR] [--json]

Answers, as the owner, the gates of a crew whose file says "answer": "owner" (each lane
stops at its gate, its agent not started, and waits). The reply is in the gate grammar
(as plan answer takes it: rec, as-is, 1a 2b, rec except 2b...), the same for every lane
answered, and is recorded as given, answered_role human and answered_by human:NAME. It
goes through the state root, so it works from another shell while the crew runs (the
running crew takes the answer within a second and the lane goes on) or after it ended
(crew run on the same state root continues the lane). A lane's owner brief is
<run>/brief.md.

  --lane ID   that lane (one whose gate does not wait is reported, code=GATE_REV_STALE
              or PHASE_NOT_AWAITING)
  --all       every lane whose gate waits
  --reply R   the reply; one that does not parse answers nothing (GATE_REPLY_UNPARSED)
  --by NAME   the owner's name, one word
  --state DIR the crew's state root (else LANEWARD_STATE_ROOT, else .laneward/state)
  --json      one JSON object per lane and a {"summary": ...} object

Lines: CREW_ANSWERED: lane=<id> status=answered|not_waiting|failed gate_rev=<n>|-
state=<run state>|- by=human:<name> [code=<CODE>] [detail=<why>], then
CREW_ANSWER_SUMMARY: lanes=<n> answered=<n> not_waiting=<n> failed=<n>
Exit status: 0 every lane named answered (--all: also none waiting), 3 a lane not waiting
or an answer refused (its code), 1 an answer that failed, 2 a bad command line or crew
file (USAGE, CREW_INVALID).`;

export const crewAnswerCommand = command({
  name: 'answer',
  help: CREW_ANSWER_HELP,
  options: { lane: { type: 'string' }, all: { type: 'boolean' }, reply: { type: 'string' }, by: { type: 'string' }, state: { type: 'string' }, json: { type: 'boolean' } },
  run: async ({ values, positionals }, io) => {
    if (positionals.length !== 1) throw usage('crew answer takes exactly one CREW.json');
    if ((values.lane === undefined) === (values.all !== true)) throw usage('crew answer takes --lane ID or --all, one of them');
    if (values.reply === undefined) throw usage('--reply REPLY is required: the owner\'s reply in the gate grammar');
    if (values.by === undefined) throw usage('--by NAME is required: who answers, recorded with the answer');
    const answers = await crewAnswer({ file: positionals[0]!, cwd: process.cwd(), env: process.env, state: values.state, lane: values.lane ?? null, reply: values.reply, by: values.by });
    const json = values.json === true;
    for (const a of answers) io.out(json ? jsonLine(answerObject(a)) : answerLine(a));
    const count = (status: LaneAnswer['status']) => answers.filter((a) => a.status === status).length;
    const summary = { lanes: answers.length, answered: count('answered'), not_waiting: count('not_waiting'), failed: count('failed') };
    io.out(json ? jsonLine({ summary }) : `CREW_ANSWER_SUMMARY: lanes=${summary.lanes} answered=${summary.answered} not_waiting=${summary.not_waiting} failed=${summary.failed}`);
    const first = answers.find((a) => a.status !== 'answered');
    return first === undefined ? exitStatus(null) : planExitStatus((first.code ?? 'INTERNAL') as ResultCode);
  },
});

function answerObject(a: LaneAnswer): Record<string, unknown> {
  return { lane: a.lane, status: a.status, code: a.code, detail: a.detail, gate_rev: a.gateRev, state: a.state, by: a.by };
}

function answerLine(a: LaneAnswer): string {
  const code = a.code === null ? '' : ` code=${oneLine(a.code)}`;
  const detail = a.detail === null ? '' : ` detail=${oneLine(a.detail)}`;
  return `CREW_ANSWERED: lane=${oneLine(a.lane)} status=${a.status} gate_rev=${a.gateRev ?? '-'} state=${oneLine(a.state ?? '-')} by=${oneLine(a.by)}${code}${detail}`;
}
