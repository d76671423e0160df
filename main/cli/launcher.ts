import { COMMAND_NAMES } from './command-names.ts';

// dist/laneward.mjs: starts the bundle of the command asked for (dist/laneward-<command>.mjs,
// each a whole CLI holding only that command; laneward-core.mjs for help, --version and
// unknown names). Hint: node compiles every byte of the bundle it starts, and one bundle of
// every command cost each start some 20-30 ms of parsing code it never ran.
const name = process.argv[2];
const known = name !== undefined && (COMMAND_NAMES as readonly string[]).includes(name);
const bundle = new URL(`./laneward-${known ? name : 'core'}.mjs`, import.meta.url).href;
await import(bundle);
