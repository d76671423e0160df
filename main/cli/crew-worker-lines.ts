import { oneLine } from '../../formats/text/one-line.ts';
import type { CrewWorkerEvent, CrewWorkerOutput } from '../queue/crew-worker.ts';
import { CREW_WORDS } from './crew-lines.ts';
import type { Io } from './io.ts';

/** The CREW_WORKER: line of each thing a crew worker reports, and where it goes: one per job on stdout, the rest on stderr. */
export function crewWorkerLine(event: CrewWorkerEvent): { readonly to: 'out' | 'err'; readonly text: string } {
  switch (event.type) {
    case 'ready':
      return { to: 'err', text: `CREW_WORKER: queue=${event.queue} worker=${event.worker} concurrency=${event.concurrency} state=${oneLine(event.root)}` };
    case 'lane_ended':
      return { to: 'out', text: `CREW_WORKER: job=${oneLine(event.job)} lane=${event.lane} status=${event.stage}${event.code === null ? '' : ` code=${event.code}`}` };
    case 'released':
      return { to: 'out', text: `CREW_WORKER: job=${oneLine(event.job)} status=released code=${event.code}` };
    case 'refused':
      return { to: 'out', text: `CREW_WORKER: job=${oneLine(event.job)} status=refused code=${event.code}` };
    case 'coordinator_wait':
      return { to: 'err', text: `CREW_WORKER: job=${oneLine(event.job)} lane=${event.lane} waiting=coordinator` };
    case 'queue_error':
      return { to: 'err', text: `CREW_WORKER: queue error: ${oneLine(event.message)}` };
  }
}

/** What `crew worker` prints of its worker's events, on the CLI's Io. */
export function crewWorkerPrinter(io: Io): CrewWorkerOutput {
  return {
    event(event) {
      const line = crewWorkerLine(event);
      if (line.to === 'out') io.out(line.text);
      else io.err(line.text);
    },
    words: CREW_WORDS,
  };
}
