import { EXIT } from '../../formats/codes.ts';
import { usage } from './args.ts';
import { ackCommand } from './artifact-ack.ts';
import { schemaCommand } from './artifact-schema.ts';
import { urgentCommand } from './artifact-urgent.ts';
import { validateCommand } from './artifact-validate.ts';
import type { Io } from './io.ts';

export const ARTIFACT_HELP = `usage: laneward artifact <validate|schema|ack|urgent> ... [--json]

  validate <run.json|dir>... [--json] [--jobs N]   the completion check, one run or a batch
  validate <file> --as <schema> [--run <id>]       one artifact file against one schema
  schema <name> | --list                           the JSON Schema of an artifact
  ack <run.json|dir> --consumer <id>               record that a consumer read a valid run
  urgent <findings.jsonl>                          the URGENT block, or "None."

Exit status: 0 ok, 1 invalid, 2 usage, 3 refused. See laneward artifact <sub> --help.`;

export async function artifactCommand(args: readonly string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'validate':
      return validateCommand(rest, io);
    case 'schema':
      return schemaCommand(rest, io);
    case 'ack':
      return ackCommand(rest, io);
    case 'urgent':
      return urgentCommand(rest, io);
    case undefined:
    case '--help':
    case '-h':
    case 'help':
      io.out(ARTIFACT_HELP);
      return sub === undefined ? EXIT.usage : EXIT.ok;
    default:
      throw usage(`unknown artifact subcommand ${JSON.stringify(sub)}`);
  }
}
