import { EXIT } from '../../formats/codes/codes.ts';
import { oneLine } from '../../formats/text/one-line.ts';
import { jsonText } from '../../formats/text/json-text.ts';
import { validateFile } from '../../workers/validate/validate-file.ts';
import { usage } from './args.ts';
import { command } from './command.ts';
import { printIssueLines } from './issue-lines.ts';
import { refuseEmptyPaths } from './paths.ts';

export const URGENT_HELP = `usage: laneward artifact urgent <findings.jsonl> [--json]

Prints the URGENT block: every finding marked "urgent": true, under the heading
"## URGENT, outside this plan", or "None." when there is none. Rows that fail their
schema are reported on stderr and the exit status is 1; the block lists the valid rows.
A file that cannot be read prints its error line and nothing on stdout (exit 1): never
"None.". --json prints {urgent, errors}, with urgent null when the file was not read.
Values from the file are printed escaped, one line each.`;

const CONTEXT = 'laneward artifact urgent';

interface UrgentRow {
  id: string;
  severity: string;
  title: string;
  suggested_owner?: string;
}

export const URGENT = command({
  name: 'urgent',
  help: URGENT_HELP,
  options: { json: { type: 'boolean' } },
  run: ({ values, positionals }, io) => {
    if (positionals.length !== 1) throw usage('expected exactly one findings.jsonl');
    refuseEmptyPaths(positionals);
    const urgent: UrgentRow[] = [];
    const report = validateFile(positionals[0]!, 'findings', undefined, (row, _line, valid) => {
      if (valid && row['urgent'] === true) urgent.push(row as unknown as UrgentRow);
    });
    const { errors } = report;
    const omitted = report.errors_omitted ?? 0;
    // A file that was not read has no verdict on urgency: "None." would read as "nothing urgent".
    const unread = errors.some((found) => found.code === 'ARTIFACT_MISSING');
    if (values.json) {
      io.out(jsonText({ urgent: unread ? null : urgent, errors, ...(omitted > 0 ? { errors_omitted: omitted } : {}) }));
    } else {
      printIssueLines(io, CONTEXT, errors, omitted);
      if (unread) return EXIT.fail;
      if (urgent.length === 0) io.out('None.');
      else {
        io.out('## URGENT, outside this plan');
        for (const row of urgent) {
          const owner = row.suggested_owner === undefined ? '' : `; suggested owner: ${oneLine(String(row.suggested_owner))}`;
          io.out(`- [${oneLine(row.severity)}] ${oneLine(row.title)} (${oneLine(row.id)}${owner})`);
        }
      }
    }
    return errors.length === 0 ? EXIT.ok : EXIT.fail;
  },
});
