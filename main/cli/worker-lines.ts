import { issue, renderIssueLine } from '../../formats/codes/issue.ts';
import { oneLine } from '../../formats/text/one-line.ts';
import type { RunsWorkerEvent } from '../queue/runs-worker.ts';
import type { Io } from './io.ts';

export const WORKER_CONTEXT = 'laneward artifact worker';

/**
 * What `artifact worker` prints of each thing its worker reports: on stderr, that it takes
 * jobs and that it stopped; per job a line (or, with --json, an object) on stdout, and a
 * failed job's error line on stderr too.
 */
export function workerPrinter(io: Io, json: boolean): (event: RunsWorkerEvent) => void {
  return (event) => {
    switch (event.type) {
      case 'ready':
        io.err(`ARTIFACT_WORKER: queue=${event.queue} root=${event.root === null ? 'job' : oneLine(event.root)} concurrency=${event.concurrency} jobs=${event.threads}`);
        return;
      case 'stopped':
        io.err(`ARTIFACT_WORKER: stopped (${event.signal})`);
        return;
      case 'done':
        io.out(json ? JSON.stringify({ job: event.job ?? null, runs: event.runs, invalid: event.invalid }) : `ARTIFACT_WORKER: job=${oneLine(event.job ?? '-')} runs=${event.runs} invalid=${event.invalid}`);
        return;
      case 'failed':
        if (json) {
          io.out(JSON.stringify({ job: event.job ?? null, failed: event.code, message: event.message }));
          return;
        }
        io.out(`ARTIFACT_WORKER: job=${oneLine(event.job ?? '-')} failed=${event.code}`);
        io.err(renderIssueLine(WORKER_CONTEXT, issue(event.code, '', `job ${event.job ?? '-'}: ${event.message}`)));
    }
  };
}
