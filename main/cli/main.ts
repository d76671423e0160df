import { EXIT } from '../../formats/codes.ts';
import { isLanewardError, toError } from '../../formats/error.ts';
import { issue, oneLine, renderIssueLine } from '../../formats/issue.ts';
import { usage } from './args.ts';
import type { Io } from './io.ts';

export const VERSION = '0.1.0';

export const MAIN_HELP = `laneward ${VERSION}: a runtime for unattended agent lanes

usage: laneward <command> ...

  artifact validate|schema|ack|urgent   the artifact contract and the completion check
  gate render|parse|decisions           the final gate and its reply grammar
  plan next|submit|answer|export|...    durable two-voice review runs of a plan
  brief render|close                    the one-page owner brief of a gate; close draft directions
  deadline start|status|run             the probe deadline guard
  lease run                             supervise a provider under a total deadline or a progress lease
  actions keygen|sign|verify            signed action descriptors
  trail start|append                    the decision trail (a formula-safe TSV)
  demo                                  build a sample archive once and batch-validate it

Every command takes --help and --json. Exit status: 0 ok, 1 fail, 2 usage, 3 refused.
Errors are one line each: <context>: <summary> (<detail> at <path>); fix: <fix> (<CODE>).`;

/** Runs one command line and returns its exit status; only here do errors become text. */
export async function main(argv: readonly string[], io: Io): Promise<number> {
  const [command, ...rest] = argv;
  // argv is input too: escaped, so an odd subcommand name cannot start a line of its own.
  const context = oneLine(`laneward${command === undefined ? '' : ` ${command}`}${rest[0] !== undefined && !rest[0].startsWith('-') ? ` ${rest[0]}` : ''}`);
  try {
    switch (command) {
      case 'artifact':
        return await (await import('./artifact.ts')).artifactCommand(rest, io);
      case 'gate':
        return await (await import('./gate.ts')).gateCommand(rest, io);
      case 'deadline':
        return await (await import('./deadline.ts')).deadlineCommand(rest, io);
      case 'lease':
        return await (await import('./lease.ts')).leaseCommand(rest, io);
      case 'actions':
        return await (await import('./actions.ts')).actionsCommand(rest, io);
      case 'plan':
        return await (await import('./plan.ts')).planCommand(rest, io);
      case 'trail':
        return (await import('./trail.ts')).trailCommand(rest, io);
      case 'brief':
        return await (await import('./brief.ts')).briefCommand(rest, io);
      case 'demo':
        return await (await import('./demo.ts')).demoCommand(rest, io);
      case '--version':
        io.out(VERSION);
        return EXIT.ok;
      case undefined:
      case '--help':
      case '-h':
      case 'help':
        io.out(MAIN_HELP);
        return command === undefined ? EXIT.usage : EXIT.ok;
      default:
        throw usage(`unknown command ${JSON.stringify(command)}`);
    }
  } catch (caught) {
    if (isLanewardError(caught)) {
      io.err(renderIssueLine(context, issue(caught.code, caught.path, caught.message)));
      return caught.code === 'USAGE' ? EXIT.usage : EXIT.fail;
    }
    const error = toError(caught);
    io.err(renderIssueLine(context, issue('INTERNAL', '', error.message)));
    return EXIT.fail;
  }
}
