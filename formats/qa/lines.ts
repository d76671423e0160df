import type { QaEvent } from './events.ts';
import type { LaneStatus } from './record.ts';
import { oneLine } from '../text/one-line.ts';

/** The prefix of each event's line: parents grep these. */
export const QA_PREFIX = {
  started: 'QA_LANE_STARTED:',
  ready: 'QA_OBSERVER_READY:',
  observer_failed: 'QA_OBSERVER_FAILED:',
  turn: 'QA_TURN:',
  cadence_paused: 'QA_CADENCE_PAUSED:',
  update: 'QA_UPDATE:',
  review_request: 'QA_REVIEW_REQUEST:',
  cross_check: 'QA_CROSS_CHECK:',
  completion_refused: 'QA_COMPLETION_REFUSED:',
  cleared: 'QA_CLEARED:',
} as const satisfies Record<QaEvent['type'], string>;

// Free text is a JSON string (quotes, so spaces stay inside the value), then escaped to one line.
const quoted = (text: string | null) => (text === null ? '-' : JSON.stringify(text));
const yes = (flag: boolean) => (flag ? 'yes' : 'no');

/** The one line of an event: `PREFIX key=value ...`, never more than one line. */
export function renderQaLine(event: QaEvent): string {
  return oneLine(`${QA_PREFIX[event.type]} ${fields(event)}`);
}

function fields(event: QaEvent): string {
  const lane = `lane=${event.lane}`;
  switch (event.type) {
    case 'started':
      return `${lane} action=${event.action}`;
    case 'ready':
      return `${lane} call=${event.call} note=${quoted(event.note)}`;
    case 'observer_failed':
      return `${lane} mode=${event.mode} call=${event.call} code=${event.code} detail=${quoted(event.detail)}`;
    case 'turn':
      return `${lane} role=${event.role} index=${event.index ?? '-'} diff=${yes(event.diff)} forwarded=${event.role === 'reasoning' ? 'never' : 'pending'} unsent=${event.unsent}`;
    case 'cadence_paused':
      return `${lane} turns=${event.turns} reason=not_ready`;
    case 'update':
      return `${lane} call=${event.call} turns=${event.from}-${event.to} verdict=${event.verdict} note=${quoted(event.note)} guidance=${quoted(event.guidance)}`;
    case 'review_request':
      return `${lane} reason=${event.reason} turns=${event.turns.join(',')} summary=${quoted(event.summary)}`;
    case 'cross_check':
      return `${lane} call=${event.call} verdict=${event.verdict} code=${event.code ?? '-'} from=${event.from} completion=${event.completion} note=${quoted(event.note)} guidance=${quoted(event.guidance)}`;
    case 'completion_refused':
      return `${lane} code=${event.code} completion=aborted`;
    case 'cleared':
      return `${lane} reason=${event.reason} turns=${event.turns} exchanges=${event.exchanges} frames=${event.frames} ready=no`;
  }
}

/** The one line of `qa status`. */
export function renderStatusLine(status: LaneStatus): string {
  const f = status.frames;
  return oneLine(
    `QA_STATUS: lane=${status.lane} state=${status.state} ready=${yes(status.ready)} calls=${status.calls} turns=${status.turns} reasoning=${status.reasoningTurns} ` +
      `last_sent=${status.lastSent} unsent=${status.unsent} since_cadence=${status.sinceCadence} unreviewed_diffs=${status.unreviewedDiffs.length} ` +
      `exchanges=${status.exchanges} bootstrap_len=${status.bootstrapLen ?? '-'} frames=bootstrap:${f.bootstrap},cadence:${f.cadence},cross-check:${f['cross-check']} epoch=${status.epoch}`,
  );
}
