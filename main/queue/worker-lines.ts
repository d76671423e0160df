import { issue, renderIssueLine } from '../../formats/codes/issue.ts';
import { oneLine } from '../../formats/text/one-line.ts';
import type { Io } from '../cli/io.ts';
import { readReason, type RunsAnswer } from './runs-job.ts';

export const WORKER_CONTEXT = 'laneward artifact worker';

/** What `artifact worker` prints per job: a line (or, with --json, an object) on stdout. */
export interface JobPrinter {
  done(id: string | undefined, answer: RunsAnswer): void;
  /** A failed job, with the code its reason starts with; as text, its error line on stderr too. */
  failed(id: string | undefined, reason: string): void;
}

export function jobPrinter(io: Io, json: boolean): JobPrinter {
  return {
    done: (id, answer) => {
      const runs = answer.reports.length;
      const invalid = answer.reports.filter((entry) => !entry.report.valid).length;
      io.out(json ? JSON.stringify({ job: id ?? null, runs, invalid }) : `ARTIFACT_WORKER: job=${oneLine(id ?? '-')} runs=${runs} invalid=${invalid}`);
    },
    failed: (id, reason) => {
      const { code, message } = readReason(reason);
      if (json) {
        io.out(JSON.stringify({ job: id ?? null, failed: code, message }));
        return;
      }
      io.out(`ARTIFACT_WORKER: job=${oneLine(id ?? '-')} failed=${code}`);
      io.err(renderIssueLine(WORKER_CONTEXT, issue(code, '', `job ${id ?? '-'}: ${message}`)));
    },
  };
}
