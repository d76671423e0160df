import { EXIT } from '../../formats/codes/codes.ts';
import { usage } from './args.ts';
import { commandContext, dispatch, fail, rawCommand, type Command, type Group } from './command.ts';
import { COMMANDS } from './commands.ts';
import type { Io } from './io.ts';

export const VERSION = '0.1.0';

export const MAIN_HELP = `laneward ${VERSION}: a runtime for unattended agent lanes

usage: laneward <command> ...

  init --repo DIR --tasks FILE          write a ready crew from a repository and a task list: keys,
                                        signed actions, one plan per task, crew.json; prints its command
  crew run|status|view|answer|retry|cancel|stop|land|clean|worker
                                        many lanes at once: review runs, QA cadence, the
                                        console; crew answer gives the owner's answer to lanes
                                        waiting at their gates; crew retry|cancel|stop act on a
                                        running crew from any shell; crew land lands the complete
                                        lanes on the base, a merge train of fast-forwards; crew run
                                        --rehearse tries a crew with no key, against laneward's
                                        own model server on loopback
  artifact validate|schema|ack|urgent|worker  the artifact contract and the completion check
  gate render|parse|decisions           the final gate and its reply grammar
  plan next|submit|run|answer|export    durable two-voice review runs of a plan, and
  plan status|resume|revise|recommend   the commands that read, recover and change one
  plan check|release|checkpoints|family
  brief render|close                    the one-page owner brief of a gate; close draft directions
  deadline start|status|run             the probe deadline guard
  lease run|fleet                       supervise a provider (or N) under a total deadline or a progress lease
  actions keygen|sign|verify            signed action descriptors
  trail start|append                    the decision trail (a formula-safe TSV)
  qa start|turn|finish|stop|reset|status  a lane's QA observer: bootstrap, cadence, cross-check
  providers [--install]                 the agent CLIs the provider presets drive: found, version, key
  demo crew|archive                     the main job (a 50-lane demo crew), or a sample archive batch-validated

Every command takes --help and --json. Exit status: 0 ok, 1 fail, 2 usage, 3 refused.
Errors are one line each: <context>: <summary> (<detail> at <path>); fix: <fix> (<CODE>).`;

const LANEWARD = rawCommand('laneward', (argv, io) => {
  const [name] = argv;
  if (name === '--version') {
    io.out(VERSION);
    return EXIT.ok;
  }
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out(MAIN_HELP);
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  throw usage(`unknown command ${JSON.stringify(name)}`);
});

/** Runs one command line and returns its exit status; only in dispatch do errors become text. */
export async function main(argv: readonly string[], io: Io): Promise<number> {
  const [name, ...rest] = argv;
  const table: Readonly<Record<string, () => Promise<Command | Group>>> = COMMANDS;
  const load = name !== undefined && Object.hasOwn(table, name) ? table[name] : undefined;
  const context = commandContext(argv);
  if (load === undefined) return dispatch(LANEWARD, argv, io, context);
  let entry: Command | Group;
  try {
    entry = await load();
  } catch (caught) {
    return fail(caught, context, {}, false, io);
  }
  return dispatch(entry, rest, io, context);
}
