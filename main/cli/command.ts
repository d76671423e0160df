import type { ParseArgsConfig } from 'node:util';
import { EXIT, type ResultCode } from '../../formats/codes/codes.ts';
import { isLanewardError, LanewardError, toError } from '../../formats/codes/error.ts';
import { exitStatus } from '../../formats/codes/exit-status.ts';
import { fixClause, issue, renderIssueLine, type Issue } from '../../formats/codes/issue.ts';
import { jsonLine, oneLine } from '../../formats/text/one-line.ts';
import { jsonText } from '../../formats/text/json-text.ts';
import { parseCommand, usage } from './args.ts';
import type { Io } from './io.ts';

type Options = NonNullable<ParseArgsConfig['options']>;
const HELP_OPTION = { help: { type: 'boolean', short: 'h' } } as const;
type WithHelp<O extends Options> = O & typeof HELP_OPTION;

/**
 * A command line parsed strictly against a command's options (plus --help/-h). `operands`
 * holds what follows the first `--` for a command that takes them (empty otherwise).
 */
export type Parsed<O extends Options> = ReturnType<typeof parseCommand<WithHelp<O>>> & { readonly operands: readonly string[] };

/** One leaf command: argv in, exit status out. Help and errors are handled by the table. */
export interface Command {
  readonly kind: 'command';
  readonly name: string;
  run(args: readonly string[], io: Io): Promise<number> | number;
}

/** A command with subcommands: `laneward <group> <sub> ...`. */
export interface Group {
  readonly kind: 'group';
  readonly name: string;
  /** Printed for a bare group (exit 2) and for --help, -h and help (exit 0). */
  readonly help: string;
  readonly commands: readonly Command[];
  /** The words that ask for the group's help; `help` too unless the group says otherwise. */
  readonly helpWords?: readonly string[];
  /** How an unknown subcommand is named in its USAGE line (default "<group> subcommand"). */
  readonly unknownNoun?: string;
  /** How a thrown error becomes output and an exit status (default: see {@link fail}). */
  readonly failure?: FailureRule;
  /** The usage error for a bare group; without it a bare group prints its help (exit 2). */
  readonly missing?: string;
}

/** The one place where a thrown error becomes a line and an exit status. */
export interface FailureRule {
  /** The exit status for a code (default: the one exit table). */
  readonly exit?: (code: ResultCode) => number;
  /** The context of the error line; `sub` is undefined for an unknown subcommand. */
  readonly context?: (sub: string | undefined) => string;
  /** With --json before any `--`, one {ok: false, code, path, message, fix} object on stdout instead. */
  readonly json?: boolean;
  /** What else a failure reports: fields added to the JSON object, lines on stdout after the error line. */
  readonly more?: (error: LanewardError, exit: number, failed: Failed) => { readonly fields: Readonly<Record<string, unknown>>; readonly lines: readonly string[] };
}

/** The subcommand that failed (undefined when unknown) and its argv. */
export interface Failed {
  readonly sub: string | undefined;
  readonly args: readonly string[];
  /** The command whose --help a fix points at (`laneward crew run`); default the line's context. */
  readonly helpCommand?: string;
}

/**
 * A leaf command whose argv is parsed strictly against `options`; `--help`/`-h` prints
 * `help` (exit 0) before anything runs.
 */
export function command<const O extends Options>(spec: {
  readonly name: string;
  readonly help: string;
  readonly options: O;
  /** false: a positional argument is a usage error. */
  readonly positionals?: boolean;
  /** true: options end at the first `--`; what follows is `operands`, never parsed. */
  readonly operands?: boolean;
  readonly run: (parsed: Parsed<O>, io: Io) => Promise<number> | number;
}): Command {
  const options = { ...spec.options, ...HELP_OPTION } as WithHelp<O>;
  return {
    kind: 'command',
    name: spec.name,
    run: (args, io) => {
      const split = spec.operands === true ? args.indexOf('--') : -1;
      const own = split === -1 ? args : args.slice(0, split);
      const parsed = { ...parseCommand(own, options, spec.positionals ?? true), operands: split === -1 ? [] : args.slice(split + 1) };
      if ((parsed.values as { help?: boolean }).help === true) {
        io.out(spec.help);
        return EXIT.ok;
      }
      return spec.run(parsed, io);
    },
  };
}

/** A leaf command that reads its own argv (the top level). */
export function rawCommand(name: string, run: Command['run']): Command {
  return { kind: 'command', name, run };
}

export function group(spec: Omit<Group, 'kind'>): Group {
  return { kind: 'group', ...spec };
}

/**
 * Runs a command or a group's subcommand and returns the exit status. Every error thrown
 * below is caught here, once: one line on stderr (or one JSON object, where the group's
 * rule says so), never a stack trace.
 */
export async function dispatch(entry: Command | Group, args: readonly string[], io: Io, context: string): Promise<number> {
  const rule = entry.kind === 'group' ? (entry.failure ?? {}) : {};
  let sub: string | undefined;
  try {
    if (entry.kind === 'command') return await entry.run(args, io);
    const [word, ...rest] = args;
    if (word === undefined && entry.missing !== undefined) throw usage(entry.missing);
    if (word === undefined || (entry.helpWords ?? ['--help', '-h', 'help']).includes(word)) {
      io.out(entry.help);
      return word === undefined ? EXIT.usage : EXIT.ok;
    }
    const found = entry.commands.find((candidate) => candidate.name === word);
    if (found === undefined) throw usage(`unknown ${entry.unknownNoun ?? `${entry.name} subcommand`} ${JSON.stringify(word)}`);
    sub = found.name;
    return await found.run(rest, io);
  } catch (caught) {
    const where = rule.context === undefined ? context : rule.context(sub);
    return fail(caught, where, rule, rule.json === true && jsonRequested(args.slice(1)), io, { sub, args: args.slice(1), helpCommand: helpCommandOf(entry, sub) });
  }
}

/**
 * The command whose --help lists what may be given: the subcommand that ran, the group
 * when the subcommand is unknown, the top level for an unknown command. Taken from the
 * table, never from argv, so an unknown word is not named as a command to ask help of.
 */
function helpCommandOf(entry: Command | Group, sub: string | undefined): string {
  if (entry.name === 'laneward') return 'laneward';
  return `laneward ${entry.name}${entry.kind === 'group' && sub !== undefined ? ` ${sub}` : ''}`;
}

/** Renders a thrown error: INTERNAL for anything that is not a LanewardError. */
export function fail(caught: unknown, context: string, rule: FailureRule, json: boolean, io: Io, failed: Failed = { sub: undefined, args: [] }): number {
  const error = isLanewardError(caught) ? caught : new LanewardError('INTERNAL', toError(caught).message);
  const exit = (rule.exit ?? exitStatus)(error.code);
  const more = rule.more?.(error, exit, failed) ?? { fields: {}, lines: [] };
  const helpCommand = failed.helpCommand ?? context;
  if (json) {
    io.out(jsonLine({ ok: false, code: error.code, path: error.path, message: error.message, fix: fixClause(error.code, helpCommand), ...more.fields }));
    return exit;
  }
  io.err(renderIssueLine(context, issue(error.code, error.path, error.message), helpCommand));
  for (const line of more.lines) io.out(line);
  return exit;
}

/** --json among the options, before any `--` that starts the operands. */
function jsonRequested(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).includes('--json');
}

/**
 * The one refusal rule: a command that refuses prints one error line per issue on
 * stderr, or with --json one {ok: false, code, path, message, fix, errors} object on
 * stdout (each of `errors` with its own fix), and returns `exit`.
 */
export function refuse(io: Io, context: string, issues: readonly Issue[], json: boolean, exit: number): number {
  const first = issues[0]!;
  const withFix = (found: Issue) => ({ ...found, fix: fixClause(found.code, context) });
  if (json) io.out(jsonText({ ok: false, code: first.code, path: first.path, message: first.message, fix: fixClause(first.code, context), errors: issues.map(withFix) }));
  else for (const found of issues) io.err(renderIssueLine(context, found));
  return exit;
}

/** The context of a top-level error line: `laneward <command> <sub>`, escaped to one line. */
export function commandContext(argv: readonly string[]): string {
  const [name, first] = argv;
  // argv is input too: escaped, so an odd subcommand name cannot start a line of its own.
  return oneLine(`laneward${name === undefined ? '' : ` ${name}`}${first !== undefined && !first.startsWith('-') ? ` ${first}` : ''}`);
}
