import { oneLine } from '../text/one-line.ts';
import type { Gate, GateItem } from '../schemas/gate.ts';

/** Items per page: few enough that an owner reads every one before replying. */
export const GATE_PAGE_SIZE = 7;

/** The reply grammar, printed under every page so the owner never has to look it up. */
export const GATE_REPLY_LINE = 'REPLY: rec | rec except <id><option>... | as-is | <id><option>... (bare yes/no is refused)';

/** A gate item with its global number: item 8 is the first of page 2. */
export type NumberedItem = GateItem & { readonly number: number };

/** How many pages the gate has (at least one: a gate has at least one item). */
export function gatePageCount(gate: Pick<Gate, 'items'>): number {
  return Math.max(1, Math.ceil(gate.items.length / GATE_PAGE_SIZE));
}

/** The items of one page (1-based), numbered globally. Out-of-range pages are empty. */
export function gatePageItems(gate: Pick<Gate, 'items'>, page: number): NumberedItem[] {
  if (!Number.isInteger(page) || page < 1) return [];
  const start = (page - 1) * GATE_PAGE_SIZE;
  // `number` is spread last: items are loose objects, and a stray field must not renumber one.
  return gate.items.slice(start, start + GATE_PAGE_SIZE).map((item, i) => ({ ...item, number: start + i + 1 }));
}

/** Every item, numbered, as `--all` shows them. */
export function gateAllItems(gate: Pick<Gate, 'items'>): NumberedItem[] {
  return gate.items.map((item, i) => ({ ...item, number: i + 1 }));
}

/**
 * The lines of one page: the GATE header, a numbered block per item, then the reply
 * grammar and the command that answers this revision. `file` is the gate path as given.
 */
export function renderGatePage(gate: Gate, page: number, file: string): string[] {
  const lines = [`GATE: run=${oneLine(gate.run)} gate_rev=${gate.gate_rev} page=${page}/${gatePageCount(gate)} items=${gate.items.length}`];
  for (const item of gatePageItems(gate, page)) lines.push(...renderItem(item));
  lines.push(GATE_REPLY_LINE);
  lines.push(`ANSWER: laneward gate parse ${oneLine(shellWord(file))} --reply "<reply>" --gate-rev ${gate.gate_rev}`);
  return lines;
}

/** One item block: `<n>. <id> [<kind>] <title>`, an indented line per option, the default. */
export function renderItem(item: NumberedItem): string[] {
  const lines = [`${item.number}. ${oneLine(item.id)} [${oneLine(item.kind)}] ${words(item.title)}`];
  for (const option of item.options) {
    const recommended = option.key === item.recommended ? ' (recommended)' : '';
    const keeps = option.key === item.keep ? ' (keeps the plan)' : '';
    lines.push(`   ${oneLine(option.key)}) ${words(option.text)}${recommended}${keeps}`);
  }
  if (item.kind === 'auto') lines.push(`   if unanswered: ${oneLine(item.recommended)}`);
  return lines;
}

/**
 * Titles and option texts come from model output: runs of whitespace (line breaks
 * included) are folded into one space for reading, then every control character left
 * (ESC, NUL) is escaped by the one renderer, so no value can start a line of its own or
 * drive the terminal.
 */
function words(text: string): string {
  return oneLine(text.replace(/\s+/g, ' ').trim());
}

/** The path as the owner can paste it into a shell: quoted only when it needs to be. */
function shellWord(path: string): string {
  return /^[\w./@%+=:,-]+$/.test(path) ? path : `'${path.replaceAll("'", `'\\''`)}'`;
}
