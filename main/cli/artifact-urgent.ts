import { EXIT } from '../../formats/codes.ts';
import { renderIssueLine } from '../../formats/issue.ts';
import { validateFile } from '../../workers/validate/validate-file.ts';
import { parseCommand, usage } from './args.ts';
import type { Io } from './io.ts';

export const URGENT_HELP = `usage: laneward artifact urgent <findings.jsonl> [--json]

Prints the URGENT block: every finding marked "urgent": true, under the heading
"## URGENT, outside this plan", or "None." when there is none. Rows that fail their
schema are reported on stderr and the exit status is 1; the block lists the valid rows.`;

const CONTEXT = 'laneward artifact urgent';

interface UrgentRow {
  id: string;
  severity: string;
  title: string;
  suggested_owner?: string;
}

export function urgentCommand(args: readonly string[], io: Io): number {
  const { values, positionals } = parseCommand(args, { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } });
  if (values.help) {
    io.out(URGENT_HELP);
    return EXIT.ok;
  }
  if (positionals.length !== 1) throw usage('expected exactly one findings.jsonl');
  const urgent: UrgentRow[] = [];
  const { errors } = validateFile(positionals[0]!, 'findings', undefined, (row, _line, valid) => {
    if (valid && row['urgent'] === true) urgent.push(row as unknown as UrgentRow);
  });
  if (values.json) {
    io.out(JSON.stringify({ urgent, errors }));
  } else {
    for (const found of errors) io.err(renderIssueLine(CONTEXT, found));
    if (urgent.length === 0) io.out('None.');
    else {
      io.out('## URGENT, outside this plan');
      for (const row of urgent) {
        const owner = row.suggested_owner === undefined ? '' : `; suggested owner: ${row.suggested_owner}`;
        io.out(`- [${row.severity}] ${row.title} (${row.id}${owner})`);
      }
    }
  }
  return errors.length === 0 ? EXIT.ok : EXIT.fail;
}
