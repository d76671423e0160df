import { EXIT } from '../../formats/codes/codes.ts';
import { oneLine } from '../../formats/text/one-line.ts';
import { renderIssueLine } from '../../formats/codes/issue.ts';
import { jsonText } from '../../formats/text/json-text.ts';
import { acknowledgeRun } from '../artifact/ack.ts';
import { usage } from './args.ts';
import { command } from './command.ts';
import { printIssueLines } from './issue-lines.ts';
import { refuseEmptyPaths } from './paths.ts';

export const ACK_HELP = `usage: laneward artifact ack <run.json|dir> --consumer <id> [--json]

Records that a consumer read the run: adds {consumer, at} to run.json's consumed_by.
Under run.json.lock, the manifest bytes are read once, validated, and rewritten with that
one entry added: every other byte is kept as written. Idempotent: a consumer already
recorded is reported with its first time and nothing is written. An invalid run, a
symlinked run.json, or one that would grow past 16 MiB is refused with exit 3
(ACK_REFUSED) and left as it is. A lock whose holder died is taken over at once.`;

const CONTEXT = 'laneward artifact ack';

export const ACK = command({
  name: 'ack',
  help: ACK_HELP,
  options: { consumer: { type: 'string' }, json: { type: 'boolean' } },
  run: ({ values, positionals }, io) => {
    if (positionals.length !== 1) throw usage('expected exactly one run.json or run directory');
    refuseEmptyPaths(positionals);
    const consumer = values.consumer;
    if (consumer === undefined || consumer.trim() === '') throw usage('--consumer <id> is required');

    const outcome = acknowledgeRun(positionals[0]!, consumer, () => new Date().toISOString());
    if (!outcome.acked) {
      if (values.json) {
        io.out(jsonText({ acked: false, run: outcome.run, consumer, code: outcome.refusal.code, errors: outcome.errors }));
      } else {
        printIssueLines(io, 'laneward artifact validate', outcome.errors, outcome.errorsOmitted);
        io.err(renderIssueLine(CONTEXT, outcome.refusal));
      }
      return EXIT.refused;
    }
    if (values.json) {
      io.out(jsonText({ acked: true, run: outcome.run, consumer, at: outcome.at, already: outcome.already }));
    } else {
      io.out(`ACK: run=${oneLine(outcome.run)} consumer=${oneLine(consumer)} at=${outcome.at}${outcome.already ? ' already' : ''}`);
    }
    return EXIT.ok;
  },
});
