import { EXIT } from '../../formats/codes.ts';
import { issue, renderIssueLine } from '../../formats/issue.ts';
import { locateRun, validateRun } from '../../workers/validate/validate-run.ts';
import { parseCommand, usage } from './args.ts';
import type { Io } from './io.ts';
import { recordConsumer } from './record-consumer.ts';

export const ACK_HELP = `usage: laneward artifact ack <run.json|dir> --consumer <id> [--json]

Records that a consumer read the run: appends {consumer, at} to run.json's consumed_by,
atomically (temp file + rename, under run.json.lock). Idempotent: a consumer already
recorded is reported with its first time and nothing is written. An invalid run is
refused with exit 3 (ACK_REFUSED) and left as it is.`;

const CONTEXT = 'laneward artifact ack';

export function ackCommand(args: readonly string[], io: Io): number {
  const { values, positionals } = parseCommand(args, {
    consumer: { type: 'string' },
    json: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    io.out(ACK_HELP);
    return EXIT.ok;
  }
  if (positionals.length !== 1) throw usage('expected exactly one run.json or run directory');
  const consumer = values.consumer;
  if (consumer === undefined || consumer.trim() === '') throw usage('--consumer <id> is required');

  const report = validateRun(positionals[0]!);
  if (!report.valid) {
    const refusal = issue('ACK_REFUSED', 'run.json', `${report.errors.length} validation error(s)`);
    if (values.json) {
      io.out(JSON.stringify({ acked: false, run: report.run, consumer, code: refusal.code, errors: report.errors }));
    } else {
      for (const found of report.errors) io.err(renderIssueLine('laneward artifact validate', found));
      io.err(renderIssueLine(CONTEXT, refusal));
    }
    return EXIT.refused;
  }
  const { manifest } = locateRun(positionals[0]!);
  const result = recordConsumer(manifest, consumer, new Date().toISOString());
  if (values.json) {
    io.out(JSON.stringify({ acked: true, run: report.run, consumer, at: result.at, already: result.already }));
  } else {
    io.out(`ACK: run=${report.run} consumer=${consumer} at=${result.at}${result.already ? ' already' : ''}`);
  }
  return EXIT.ok;
}
