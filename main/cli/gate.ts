import { basename } from 'node:path';
import { EXIT } from '../../formats/codes/codes.ts';
import { decisionRows } from '../../formats/gate/decisions.ts';
import { answerGate } from '../../formats/gate/reply.ts';
import { gateAllItems, gatePageCount, gatePageItems, renderGatePage } from '../../formats/gate/render.ts';
import { issue, type Issue } from '../../formats/codes/issue.ts';
import { jsonText } from '../../formats/text/json-text.ts';
import { checkSchema } from '../../formats/schemas/check.ts';
import { gateSchema, type Gate } from '../../formats/schemas/gate.ts';
import { readJsonDocument } from '../../workers/validate/json-document.ts';
import { intOption, usage } from './args.ts';
import { command, group, refuse, type Parsed } from './command.ts';
import type { Io } from './io.ts';
import { refuseEmptyPaths } from './paths.ts';

export const GATE_HELP = `usage: laneward gate <render|parse|decisions> <gate.json> ... [--json]

  render <gate.json> [--page N | --all]             the gate's items, seven to a page
  parse <gate.json> --reply TEXT --gate-rev N       resolve a reply into one choice per item
  decisions <gate.json> --reply TEXT --gate-rev N   the same, as decisions.jsonl rows

Replies: rec | rec except <id><option>... | as-is | <id><option>... (bare yes/no is refused).
Exit status: 0 ok, 1 refused reply or invalid gate.json, 2 usage or page out of range.`;

export const RENDER_HELP = `usage: laneward gate render <gate.json> [--page N | --all] [--json]

Prints GATE: run=<run> gate_rev=<n> page=<p>/<pages> items=<total>, then each item as
"<n>. <id> [<kind>] <title>" with one "   <key>) <text>" line per option (marked
(recommended), and (keeps the plan) on the keep option) and, for auto items,
"   if unanswered: <key>"; then the REPLY grammar and the ANSWER command. Pages hold seven
items, numbered across pages. --page N picks a page (default 1; GATE_PAGE_OUT_OF_RANGE,
exit 2, when there is none); --all prints every page in turn. --json prints
{run, gate_rev, page, pages, items} (page null with --all; items carry "number").`;

export const PARSE_HELP = `usage: laneward gate parse <gate.json> --reply TEXT --gate-rev N [--json]

Resolves the reply against the gate: GATE_REPLY: gate_rev=<n> mode=<mode> answered=<k>
pending=<m>, then CHOICE: id=<id> chosen=<key|-> source=<source> status=<status> per item.
A --gate-rev other than the file's is GATE_REV_STALE, a reply that does not parse is
GATE_REPLY_UNPARSED: both exit 1 with nothing applied. An unanswered auto item takes its
recommendation; an unanswered approval item stays pending. --json prints
{ok, gate_rev, mode, choices: [{id, chosen, source, status, owner_named}]}, or
{ok: false, code, path, message, errors} when refused.`;

export const DECISIONS_HELP = `usage: laneward gate decisions <gate.json> --reply TEXT --gate-rev N [--by WHO] [--json]

Resolves the reply like gate parse, then prints one decisions v1 row per item as JSONL
(append it to decisions.jsonl). Row ids are <run>-<id> at gate_rev 1 and
<run>-r<rev>-<id> after. Resolved rows carry answered_at (now) and, with --by,
answered_by. Refusals as in gate parse (exit 1). --json prints {ok, gate_rev, mode,
decisions: [rows]}.`;

const RENDER_OPTIONS = { json: { type: 'boolean' }, page: { type: 'string' }, all: { type: 'boolean' } } as const;
const ANSWER_OPTIONS = { json: { type: 'boolean' }, reply: { type: 'string' }, 'gate-rev': { type: 'string' }, by: { type: 'string' } } as const;

const render = command({
  name: 'render',
  help: RENDER_HELP,
  options: RENDER_OPTIONS,
  run: ({ values, positionals }, io) => {
    const file = onePath(positionals);
    if (values.all === true && values.page !== undefined) throw usage('--page and --all exclude each other');
    // Page 0 parses, so that it is reported as out of range like any page the gate lacks.
    const page = intOption('page', values.page, 0, Number.MAX_SAFE_INTEGER) ?? 1;
    const json = values.json === true;
    const context = 'laneward gate render';
    const gate = loadGate(file);
    if (Array.isArray(gate)) return refuse(io, context, gate, json, EXIT.fail);
    const pages = gatePageCount(gate);
    if (values.all !== true && (page < 1 || page > pages)) {
      return refuse(io, context, [issue('GATE_PAGE_OUT_OF_RANGE', '--page', `page ${page} of ${pages}`)], json, EXIT.usage);
    }
    const shown = values.all === true ? Array.from({ length: pages }, (_, i) => i + 1) : [page];
    if (json) {
      const items = values.all === true ? gateAllItems(gate) : gatePageItems(gate, page);
      io.out(jsonText({ run: gate.run, gate_rev: gate.gate_rev, page: values.all === true ? null : page, pages, items }));
    } else {
      for (const p of shown) for (const line of renderGatePage(gate, p, file)) io.out(line);
    }
    return EXIT.ok;
  },
});

const answer = (sub: 'parse' | 'decisions') =>
  command({
    name: sub,
    help: sub === 'parse' ? PARSE_HELP : DECISIONS_HELP,
    options: ANSWER_OPTIONS,
    run: ({ values, positionals }, io) => answerCommand(sub, values, positionals, io),
  });

/** `laneward gate <sub>`: parse the command line, call formats/, print lines. */
export const GATE = group({ name: 'gate', help: GATE_HELP, commands: [render, answer('parse'), answer('decisions')] });

function answerCommand(sub: 'parse' | 'decisions', values: Parsed<typeof ANSWER_OPTIONS>['values'], positionals: readonly string[], io: Io): number {
  const file = onePath(positionals);
  if (values.reply === undefined) throw usage('--reply <text> is required');
  const gateRev = intOption('gate-rev', values['gate-rev'], 0, Number.MAX_SAFE_INTEGER);
  if (gateRev === undefined) throw usage('--gate-rev <n> is required: the gate_rev the reply answers');
  if (values.by !== undefined && sub === 'parse') throw usage('--by goes with gate decisions');
  if (values.by !== undefined && values.by.trim() === '') throw usage('--by needs a name');
  const json = values.json === true;
  const context = `laneward gate ${sub}`;
  const gate = loadGate(file);
  if (Array.isArray(gate)) return refuse(io, context, gate, json, EXIT.fail);

  const outcome = answerGate(gate, values.reply, gateRev);
  if (!outcome.ok) {
    const at = outcome.code === 'GATE_REV_STALE' ? '--gate-rev' : '--reply';
    return refuse(io, context, [issue(outcome.code, at, outcome.detail)], json, EXIT.fail);
  }
  const { mode, choices } = outcome;
  if (sub === 'decisions') {
    const stamp = { reply: values.reply, at: new Date().toISOString(), ...(values.by === undefined ? {} : { by: values.by }) };
    const rows = decisionRows(gate, outcome, stamp);
    if (json) io.out(jsonText({ ok: true, gate_rev: gate.gate_rev, mode, decisions: rows }));
    else for (const row of rows) io.out(jsonText(row));
    return EXIT.ok;
  }
  if (json) {
    io.out(jsonText({ ok: true, gate_rev: gate.gate_rev, mode, choices }));
    return EXIT.ok;
  }
  const answered = choices.filter((found) => found.chosen !== null).length;
  io.out(`GATE_REPLY: gate_rev=${gate.gate_rev} mode=${mode} answered=${answered} pending=${choices.length - answered}`);
  for (const found of choices) {
    io.out(`CHOICE: id=${found.id} chosen=${found.chosen ?? '-'} source=${found.source} status=${found.status}`);
  }
  return EXIT.ok;
}

function onePath(positionals: readonly string[]): string {
  if (positionals.length !== 1) throw usage('expected exactly one gate.json');
  refuseEmptyPaths(positionals);
  return positionals[0]!;
}

/** Reads and checks gate.json: the gate, or the issues that stop every subcommand. */
function loadGate(file: string): Gate | Issue[] {
  const name = basename(file);
  const read = readJsonDocument(file, name);
  if ('issue' in read) return [read.issue];
  return checkSchema(gateSchema, read.value, name) ?? (read.value as Gate);
}
