import { EXIT } from '../../formats/codes/codes.ts';
import { isLanewardError, toError } from '../../formats/codes/error.ts';
import { issue, renderIssueLine, type Issue } from '../../formats/codes/issue.ts';
import { oneLine } from '../../formats/text/one-line.ts';
import { intOption, usage } from './args.ts';
import { command, group, refuse } from './command.ts';

export const BRIEF_HELP = `usage: laneward brief <render|close> --out <run dir> ... [--json]

  render --out DIR [--page N] [--write] [--captain] [--summary F]
         the one-page owner brief of the run's gate
  close  --out DIR --plan F
         rewrite the plan's "draft direction stands until the owner decides" lines

Exit status: 0 ok, 1 unresolved draft directions, 2 usage or page out of range, 3 refused.`;

export const RENDER_HELP = `usage: laneward brief render --out DIR [--page N] [--write] [--captain] [--summary F] [--json]

One page built from DIR/gate.json, DIR/decisions.jsonl and DIR/findings.jsonl
(BRIEF_INPUT_MISSING, exit 3, when one is absent or unreadable; invalid content keeps the
validator's code, exit 3). In order: the "## URGENT, outside this plan" block, a
"Summary:" line (generated, or the text of --summary F or DIR/summary.md), the gate's
decisions seven to a page (--page N, GATE_PAGE_OUT_OF_RANGE exit 2 past the last),
"Cost so far:" from the SPEND line of DIR/review-record.md, and last the line naming
review-record.md and the plan answer call. --captain puts the cost under "### Cost"
above a trailer for a relaying agent. --write also saves the page as DIR/brief.md
(atomically). --json prints {ok, run, gate_rev, page, pages, lines, written}.`;

export const CLOSE_HELP = `usage: laneward brief close --out DIR --plan F [--json]

Rewrites every plan line containing "draft direction stands until the owner decides"
whose decision is decided: the phrase becomes "decided <label><option> (<option text>)
on <date>" and DRAFT_DIRECTION: line <n> <id> rewritten is printed. A line names its
decision by a parenthesised marker, the gate label such as (uc1) or a full decision id.
A line whose decision is pending, or that names none or several, stays and is reported
as DRAFT_DIRECTION_UNRESOLVED (exit 1). The plan is rewritten atomically, only when a
line changed. --json prints {ok, plan, changed, rewritten, unresolved}.`;

const COMMON = { json: { type: 'boolean' }, out: { type: 'string' } } as const;
const RENDER_OPTIONS = { ...COMMON, page: { type: 'string' }, write: { type: 'boolean' }, captain: { type: 'boolean' }, summary: { type: 'string' } } as const;
const CLOSE_OPTIONS = { ...COMMON, plan: { type: 'string' } } as const;

const render = command({
  name: 'render',
  help: RENDER_HELP,
  options: RENDER_OPTIONS,
  positionals: false,
  run: async ({ values }, io) => {
    const out = required(values.out, '--out <run dir>');
    if (values.summary !== undefined && values.summary === '') throw usage('--summary needs a file');
    // Page 0 parses, so that it is reported as out of range like any page the gate lacks.
    const page = intOption('page', values.page, 0, Number.MAX_SAFE_INTEGER) ?? 1;
    const json = values.json === true;
    const context = 'laneward brief render';
    const { briefRender } = await import('../brief/render.ts');
    const outcome = guarded(() => briefRender({ out, page, captain: values.captain === true, write: values.write === true, summary: values.summary }));
    if ('failed' in outcome) return refuse(io, context, [outcome.failed], json, EXIT.fail);
    if (!outcome.ok) return refuse(io, context, outcome.issues, json, outcome.usage ? EXIT.usage : EXIT.refused);
    if (json) {
      io.out(JSON.stringify({ ok: true, run: outcome.run, gate_rev: outcome.gateRev, page: outcome.page, pages: outcome.pages, lines: outcome.lines, written: outcome.written }));
    } else {
      for (const line of outcome.lines) io.out(line);
    }
    return EXIT.ok;
  },
});

const close = command({
  name: 'close',
  help: CLOSE_HELP,
  options: CLOSE_OPTIONS,
  positionals: false,
  run: async ({ values }, io) => {
    const out = required(values.out, '--out <run dir>');
    const plan = required(values.plan, '--plan <file>');
    const json = values.json === true;
    const context = 'laneward brief close';
    const { briefClose } = await import('../brief/close.ts');
    const outcome = guarded(() => briefClose({ out, plan }));
    if ('failed' in outcome) return refuse(io, context, [outcome.failed], json, EXIT.fail);
    if (!outcome.ok) return refuse(io, context, outcome.issues, json, EXIT.refused);
    const exit = outcome.unresolved.length === 0 ? EXIT.ok : EXIT.fail;
    if (json) {
      io.out(JSON.stringify({ ok: exit === EXIT.ok, plan: outcome.plan, changed: outcome.changed, rewritten: outcome.rewritten, unresolved: outcome.unresolved }));
      return exit;
    }
    for (const found of outcome.rewritten) io.out(`DRAFT_DIRECTION: line ${found.line} ${oneLine(found.id)} rewritten`);
    for (const found of outcome.unresolved) {
      io.out(`DRAFT_DIRECTION_UNRESOLVED: line ${found.line} ${found.id === null ? '-' : oneLine(found.id)} ${oneLine(found.why)}`);
      io.err(renderIssueLine(context, issue('DRAFT_DIRECTION_UNRESOLVED', `${outcome.plan}:${found.line}`, found.why)));
    }
    io.out(`DRAFT_DIRECTIONS: rewritten=${outcome.rewritten.length} unresolved=${outcome.unresolved.length} changed=${outcome.changed ? 'yes' : 'no'} plan=${oneLine(outcome.plan)}`);
    return exit;
  },
});

/** `laneward brief <sub>`: parse the command line, call main/brief, print lines. */
export const BRIEF = group({ name: 'brief', help: BRIEF_HELP, commands: [render, close] });

/** A write that fails (disk full, permissions) is one IO_ERROR line, never a stack trace. */
function guarded<T>(run: () => T): T | { failed: Issue } {
  try {
    return run();
  } catch (caught) {
    if (isLanewardError(caught)) throw caught;
    return { failed: issue('IO_ERROR', '', toError(caught).message) };
  }
}

function required(value: string | undefined, what: string): string {
  if (value === undefined || value === '') throw usage(`${what} is required`);
  return value;
}

