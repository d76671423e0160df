import { group } from './command.ts';
import { ACK } from './artifact-ack.ts';
import { SCHEMA } from './artifact-schema.ts';
import { URGENT } from './artifact-urgent.ts';
import { VALIDATE } from './artifact-validate.ts';
import { WORKER } from './artifact-worker.ts';

export const ARTIFACT_HELP = `usage: laneward artifact <validate|worker|schema|ack|urgent> ... [--json]

  validate <run.json|dir>... [--json] [--jobs N]   the completion check, one run or a batch
  validate <run.json|dir>... --queue URL --key K   the same batch, validated by the queue's workers
  validate <file> --as <schema> [--run <id>]       one artifact file against one schema
  worker --queue URL --trust PUB [--root DIR]      validate the runs queued with --queue
  schema <name> | --list                           the JSON Schema of an artifact
  ack <run.json|dir> --consumer <id>               record that a consumer read a valid run
  urgent <findings.jsonl>                          the URGENT block, or "None."

Exit status: 0 ok, 1 invalid, 2 usage, 3 refused. See laneward artifact <sub> --help.`;

export const ARTIFACT = group({
  name: 'artifact',
  help: ARTIFACT_HELP,
  commands: [
    VALIDATE,
    WORKER,
    SCHEMA,
    ACK,
    URGENT,
  ],
});
