import { group, rawCommand } from './command.ts';
import { ackCommand } from './artifact-ack.ts';
import { schemaCommand } from './artifact-schema.ts';
import { urgentCommand } from './artifact-urgent.ts';
import { validateCommand } from './artifact-validate.ts';

export const ARTIFACT_HELP = `usage: laneward artifact <validate|schema|ack|urgent> ... [--json]

  validate <run.json|dir>... [--json] [--jobs N]   the completion check, one run or a batch
  validate <file> --as <schema> [--run <id>]       one artifact file against one schema
  schema <name> | --list                           the JSON Schema of an artifact
  ack <run.json|dir> --consumer <id>               record that a consumer read a valid run
  urgent <findings.jsonl>                          the URGENT block, or "None."

Exit status: 0 ok, 1 invalid, 2 usage, 3 refused. See laneward artifact <sub> --help.`;

export const ARTIFACT = group({
  name: 'artifact',
  help: ARTIFACT_HELP,
  commands: [
    rawCommand('validate', validateCommand),
    rawCommand('schema', schemaCommand),
    rawCommand('ack', ackCommand),
    rawCommand('urgent', urgentCommand),
  ],
});
