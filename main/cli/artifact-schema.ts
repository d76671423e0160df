import { toJsonSchema } from '@valibot/to-json-schema';
import { EXIT } from '../../formats/codes/codes.ts';
import { isSchemaName, SCHEMAS } from '../../formats/schemas/index.ts';
import { usage } from './args.ts';
import { command } from './command.ts';

export const SCHEMA_HELP = `usage: laneward artifact schema <name> | --list [--json]

Prints the draft 2020-12 JSON Schema of one artifact schema, generated from the same
valibot schema the validator checks with. --list prints the names, one per line:
${Object.keys(SCHEMAS).join(', ')}. Checks JSON Schema cannot express (unique gate item ids
and option keys, a recommended key naming an option) are enforced by the validator only.
--json prints the schema on one line, or the list as one JSON array.`;

/** The schema names in the order `--list` prints them (the contract's seven, then gate). */
export const SCHEMA_NAMES = Object.keys(SCHEMAS);

export const SCHEMA = command({
  name: 'schema',
  help: SCHEMA_HELP,
  options: { list: { type: 'boolean' }, json: { type: 'boolean' } },
  run: ({ values, positionals }, io) => {
    if (values.list) {
      if (positionals.length > 0) throw usage('--list takes no schema name');
      if (values.json) io.out(JSON.stringify(SCHEMA_NAMES));
      else for (const name of SCHEMA_NAMES) io.out(name);
      return EXIT.ok;
    }
    const [name, ...extra] = positionals;
    if (name === undefined || extra.length > 0) throw usage('expected exactly one schema name, or --list');
    if (!isSchemaName(name)) throw usage(`unknown schema ${JSON.stringify(name)}; expected one of ${SCHEMA_NAMES.join(', ')}`);
    const schema = toJsonSchema(SCHEMAS[name].schema, { target: 'draft-2020-12', errorMode: 'ignore' });
    io.out(JSON.stringify({ ...schema, title: name }, null, values.json ? undefined : 2));
    return EXIT.ok;
  },
});
