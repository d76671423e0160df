import { COMMANDS } from './commands.ts';
import { main } from './main.ts';
import type { Io } from './io.ts';

/** One `laneward ... --help` and what it printed. */
export interface HelpText {
  readonly argv: readonly string[];
  readonly text: string;
}

/** Runs one command line in-process and returns what it printed on stdout. */
async function printed(argv: readonly string[]): Promise<string> {
  const out: string[] = [];
  const io: Io = { out: (line) => void out.push(line), err: () => {}, errRaw: () => {}, stderrIsTTY: false };
  await main(argv, io);
  return out.join('\n');
}

/**
 * Every help text the CLI prints, in the command table's order: `laneward --help`, then
 * each command's `--help` and each of its subcommands' `--help`.
 */
export async function helpTexts(): Promise<HelpText[]> {
  const texts: HelpText[] = [{ argv: ['--help'], text: await printed(['--help']) }];
  for (const [name, load] of Object.entries(COMMANDS)) {
    const entry = await load();
    texts.push({ argv: [name, '--help'], text: await printed([name, '--help']) });
    if (entry.kind !== 'group') continue;
    for (const sub of entry.commands) texts.push({ argv: [name, sub.name, '--help'], text: await printed([name, sub.name, '--help']) });
  }
  return texts;
}

/** A fence longer than any run of backticks in `text`. */
function fence(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((match) => match[0].length));
  return '`'.repeat(Math.max(3, longest + 1));
}

/**
 * docs/commands.md: the help texts as the CLI prints them. A subcommand whose help is
 * the text already shown (its group's, or a sibling's) is named, not repeated.
 */
export async function renderCommandsDoc(): Promise<string> {
  const lines = [
    '# Command reference',
    '',
    'Every help text `laneward` prints, exactly as `laneward <command> [<subcommand>] --help` prints it.',
    'This file is generated from the CLI itself: `node scripts/docs-commands.mjs` writes it and',
    '`test/docs-commands.test.ts` fails when it is out of date. Do not edit it by hand.',
    '',
  ];
  const shown = new Map<string, string>();
  for (const { argv, text } of await helpTexts()) {
    const words = argv.slice(0, -1);
    const title = ['laneward', ...words].join(' ');
    lines.push(`${'#'.repeat(Math.min(words.length + 1, 3) + 1)} \`${title}\``, '');
    const same = shown.get(text);
    if (same !== undefined) {
      lines.push(`\`${title} --help\` prints the same text as \`${same} --help\`.`, '');
      continue;
    }
    shown.set(text, title);
    const mark = fence(text);
    lines.push(`${mark}text`, text, mark, '');
  }
  return `${lines.join('\n').trimEnd()}\n`;
}
