import { exitStatus } from '../../formats/codes/exit-status.ts';
import type { CrewSnapshot } from '../../formats/console/snapshot.ts';
import { formatSpan, laneAttention, quietSeconds, selectLanes } from '../../formats/console/view.ts';
import { jsonLine, oneLine } from '../../formats/text/one-line.ts';
import { openCrewConsole } from '../console/crew-console.ts';
import { interruptSignal } from '../interrupt.ts';
import { intOption, minutesOption, usage } from './args.ts';
import { command } from './command.ts';
import { laneLines } from './lane-lines.ts';
import { LanewardError } from '../../formats/codes/error.ts';
import { join } from 'node:path';
import { issue, renderIssueLine } from '../../formats/codes/issue.ts';
import { laneReceipts, type LaneReceipt } from '../crew/receipt-lines.ts';
import { SHIP_RUN_FILE, stale as staleReceipt } from '../crew/ship-receipt.ts';

export const CREW_VIEW_HELP = `usage: laneward crew view CREW.json --serve PORT [--state DIR] [--stuck-after TIME]
                         [--rehearse]

Serves the crew's console from its state root, read-only, on 127.0.0.1:PORT (0: any free
port; CREW_VIEW: url on stderr) until interrupted: the same pages crew run --serve shows
(without its actions and token: a view only shows; CONSOLE_READ_ONLY),
for a crew that finished, failed, was killed or is still running in another process
(then the page follows it, reading the store every second). A finished crew is shown as
it was at its end; one whose process is gone (its pid and start tick) without an end, as
when it was killed, is shown stopped as of its last change, with the command that
continues it, and no lane of it is stuck.

  --serve PORT       the port (required)
  --state DIR        the state root (else LANEWARD_STATE_ROOT, else .laneward/state)
  --stuck-after TIME a running lane quiet for longer is stuck (default: what the crew
                     run used, else 2m)
  --rehearse         the crew's rehearsal (crew run --rehearse: <crew>-rehearsal)

Pages: / the crew, /snapshot.json, /events, /lanes/<id>, /lanes/<id>.json.
Exit status: 0 when interrupted (SIGINT, SIGTERM), 2 a bad crew file or command line
(CREW_INVALID, USAGE), 1 a state root that cannot be read (STATE_UNAVAILABLE).`;

export const CREW_STATUS_HELP = `usage: laneward crew status CREW.json [--state DIR] [--stuck-after TIME] [--lane ID]
                           [--rehearse] [--json]

Prints a crew as its state root holds it, read-only (finished, failed, killed, or
running in another process): the crew, then the lanes that need the operator (failed
first, then stuck: running and quiet for longer than --stuck-after, then interrupted),
then the command that runs the failed lanes again and the one that continues the crew.
--rehearse reads the crew's rehearsal (crew run --rehearse: <crew>-rehearsal, its
commands with --rehearse) instead.

Lines:
CREW_STATUS: crew=<name> run=running|done|interrupted|stopped lanes=<n> <state>=<n>...
  lanes_per_min=<x>|- eta_s=<n>|- spend_usd=<x> cap_usd=<x>|- unpriced=<n>
  (interrupted: it ended early with lanes unfinished; stopped: its process is gone, pid
  and start tick, with no end recorded, as when it was killed: nothing runs, no lane is
  stuck, and the figures stand where it stopped)
CREW_NEEDS: lane=<id> need=failed state=failed code=<CODE> [detail=<why>]
CREW_NEEDS: lane=<id> need=stuck state=<stage> quiet_s=<n> quiet=<4m>
CREW_NEEDS: lane=<id> need=interrupted state=<stage> code=<CODE>|- [detail=<why>]
CREW_RETRY: <command>          (when a lane failed)
CREW_RESUME: <command>         (when the crew is interrupted or stopped: it continues
                               every unfinished lane where it stopped)
CREW_RECEIPT: lane=<id> status=current|stale|missing head=<12>|- tip=<12>|- branch=<b>|-
  (each complete lane that wrote a ship receipt, a crew with a "pregate": current while
  its branch's tip is the head the receipt binds; stale, QUEUE_RECEIPT_STALE on stderr,
  when the branch moved or is gone; missing when ship-run.json does not parse)
--json: the crew's snapshot, the same JSON as /snapshot.json, on one line.
--lane ID: that lane's whole story instead (--json: the JSON of /lanes/<id>.json), as
  LANE:, LANE_STAGE:, LANE_ATTEMPT:, LANE_PHASE:, LANE_GATE:, LANE_QA:, LANE_WORKSPACE:,
  LANE_CALL:, LANE_RUNNING:, LANE_OWNER:, LANE_FIX:, LANE_RETRY: and LANE_RESUME: lines
  (key=value, - for none; LANE_CALL: the call a failed lane failed on, its exit status or
  signal and its stderr's last line; LANE_RUNNING: the agent turn in flight, its pid,
  spawn, mode, deadline, last admitted mark (seen only by the crew's own view) and lease
  end; LANE_OWNER: a lane waiting for its owner, its brief and the command that answers
  it; LANE_RESUME: the command that continues a lane interrupted, or in flight in a crew
  no process runs); a lane the crew file does not name is USAGE.
Exit status: 0 no lane failed, 1 a lane failed (CREW_LANE_FAILED), 3 a receipt is stale
(QUEUE_RECEIPT_STALE), 2 a bad crew file or command line (CREW_INVALID, USAGE), 1 a state
root that cannot be read (STATE_UNAVAILABLE).`;

const shared = {
  state: { type: 'string' },
  'stuck-after': { type: 'string' },
  rehearse: { type: 'boolean' },
} as const;

function stuckAfter(raw: string | undefined): number | undefined {
  const ms = minutesOption('stuck-after', raw);
  return ms === undefined ? undefined : ms / 1000;
}

export const crewView = command({
  name: 'view',
  help: CREW_VIEW_HELP,
  options: { ...shared, serve: { type: 'string' } },
  run: async ({ values, positionals }, io) => {
    if (positionals.length !== 1) throw usage('crew view takes exactly one CREW.json');
    const port = intOption('serve', values.serve, 0, 65_535);
    if (port === undefined) throw usage('crew view needs --serve PORT');
    const stuck = stuckAfter(values['stuck-after']);
    const { source, loaded, store } = openCrewConsole({ file: positionals[0]!, cwd: process.cwd(), env: process.env, state: values.state, rehearse: values.rehearse === true, ...(stuck === undefined ? {} : { stuckAfterS: stuck }) });
    const { serveCrew } = await import('../console/serve.ts');
    const { LANE_PAGE } = await import('../console/lane-page-route.ts');
    const { consoleReads } = await import('../console/console-ports.ts');
    // A view only shows: its reads on request (gates, diffs), no actions and no token.
    const reads = consoleReads(loaded, (lane) => store.crewLanes.get([loaded.crew.crew, lane])?.head ?? null);
    const server = await serveCrew(port, source, { lanePage: LANE_PAGE, reads }).catch((error: unknown) => {
      throw new LanewardError('USAGE', `--serve ${port}: ${error instanceof Error ? error.message : String(error)}`, { path: '--serve' });
    });
    io.err(`CREW_VIEW: ${server.url}`);
    const interrupt = interruptSignal();
    try {
      await new Promise<void>((resolve) => {
        if (interrupt.signal.aborted) resolve();
        interrupt.signal.addEventListener('abort', () => resolve(), { once: true });
      });
    } finally {
      interrupt.release();
      await server.close();
    }
    return exitStatus(null);
  },
});

export const crewStatus = command({
  name: 'status',
  help: CREW_STATUS_HELP,
  options: { ...shared, json: { type: 'boolean' }, lane: { type: 'string' } },
  run: async ({ values, positionals }, io) => {
    if (positionals.length !== 1) throw usage('crew status takes exactly one CREW.json');
    const stuck = stuckAfter(values['stuck-after']);
    const { source, loaded, store } = openCrewConsole({ file: positionals[0]!, cwd: process.cwd(), env: process.env, state: values.state, rehearse: values.rehearse === true, ...(stuck === undefined ? {} : { stuckAfterS: stuck }) });
    if (values.lane !== undefined) {
      const story = source.laneStory(values.lane);
      if (story === undefined) throw usage(`crew status --lane: the crew file names no lane ${JSON.stringify(values.lane)}`);
      if (values.json === true) io.out(jsonLine(story));
      else for (const line of laneLines(story)) io.out(line);
      return exitStatus(story.state === 'failed' ? 'CREW_LANE_FAILED' : null);
    }
    const snapshot = source.snapshot();
    const receipts = values.json === true ? [] : await laneReceipts(loaded, store);
    if (values.json === true) io.out(jsonLine(snapshot));
    else for (const line of [...statusLines(snapshot), ...receipts.map(receiptLine)]) io.out(line);
    const stale = receipts.find((r) => r.status === 'stale');
    if (stale !== undefined) {
      const path = join(loaded.out, stale.lane, SHIP_RUN_FILE);
      io.err(renderIssueLine('laneward crew status', issue('QUEUE_RECEIPT_STALE', path, `lane ${stale.lane}: ${staleReceipt(stale.branch ?? '(no branch)', stale.head ?? '', stale.tip, path).message}`)));
    }
    return exitStatus((snapshot.byState['failed'] ?? 0) > 0 ? 'CREW_LANE_FAILED' : stale !== undefined ? 'QUEUE_RECEIPT_STALE' : null);
  },
});

/** `CREW_RECEIPT: lane=<id> status=current|stale|missing head=<12>|- tip=<12>|- branch=<b>|-` */
export function receiptLine(r: LaneReceipt): string {
  const short = (sha: string | null) => (sha === null || sha === '' ? '-' : sha.slice(0, 12));
  return `CREW_RECEIPT: lane=${oneLine(r.lane)} status=${r.status} head=${short(r.head)} tip=${short(r.tip)} branch=${r.branch === null ? '-' : oneLine(r.branch)}`;
}

/**
 * The crew, the lanes that need the operator (failed, then stuck, then interrupted), the
 * command that retries the failed ones and, for a crew interrupted or whose process is
 * gone, the command that continues it.
 */
export function statusLines(s: CrewSnapshot): string[] {
  const states = Object.entries(s.byState)
    .map(([state, n]) => `${oneLine(state)}=${n}`)
    .join(' ');
  const num = (n: number | null, digits: number) => (n === null ? '-' : n.toFixed(digits));
  const lines = [
    `CREW_STATUS: crew=${oneLine(s.crew)} run=${s.run} lanes=${s.lanes.length} ${states} lanes_per_min=${num(s.lanesPerMinute, 2)} eta_s=${num(s.etaS, 0)} spend_usd=${s.spend.usd.toFixed(6)} cap_usd=${num(s.spend.capUsd, 2)} unpriced=${s.spend.unpriced ?? 0}`,
  ];
  for (const lane of selectLanes(s, { state: 'attention', code: '', text: '', sort: 'attention', page: 0 })) {
    const need = laneAttention(lane, s);
    const detail = lane.detail == null ? '' : ` detail=${oneLine(lane.detail)}`;
    if (need === 'failed') {
      lines.push(`CREW_NEEDS: lane=${oneLine(lane.id)} need=failed state=failed code=${oneLine(lane.code ?? 'INTERNAL')}${detail}`);
    } else if (need === 'interrupted' || need === 'waiting') {
      // A lane at its gate for its owner says so (need=waiting), with what else an interrupted lane says.
      lines.push(`CREW_NEEDS: lane=${oneLine(lane.id)} need=${need} state=${oneLine(lane.state)} code=${oneLine(lane.code ?? '-')}${detail}`);
    } else {
      lines.push(`CREW_NEEDS: lane=${oneLine(lane.id)} need=stuck state=${oneLine(lane.state)} quiet_s=${Math.round(quietSeconds(lane, s) ?? 0)} quiet=${formatSpan(quietSeconds(lane, s))}`);
    }
  }
  if ((s.byState['failed'] ?? 0) > 0 && s.retryCommand !== null) lines.push(`CREW_RETRY: ${oneLine(s.retryCommand)}`);
  if ((s.run === 'interrupted' || s.run === 'stopped') && s.resumeCommand !== null) lines.push(`CREW_RESUME: ${oneLine(s.resumeCommand)}`);
  return lines;
}
