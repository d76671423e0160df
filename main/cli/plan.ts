import { existsSync, readFileSync } from 'node:fs';
import { join, resolve as resolvePath } from 'node:path';
import { EXIT } from '../../formats/codes.ts';
import { planExitStatus } from '../../formats/exit-status.ts';
import { isLanewardError, LanewardError, toError } from '../../formats/error.ts';
import { issue, oneLine, renderIssueLine } from '../../formats/issue.ts';
import { tryReadBounded } from '../fs/read-bounded.ts';
import type { PlanEnv } from '../plan/locate.ts';
import { reportLines, resultLine, type PlanReport } from '../plan/report.ts';
import { intOption, parseCommand, usage } from './args.ts';
import type { Io } from './io.ts';

export const PLAN_HELP = `usage: laneward plan <command> --out <run dir> [--state DIR] [--json]

A durable, two-voice review of a plan, driven by a loop of commands:
  next     --out DIR [--plan F] [--ui|--no-ui] [--developer-tool|--no-dx] [--spend-cap USD]
           [--estimate-usd USD] [--redispatch ATTEMPT] [--ceo-only] [--no-carry-forward]
           [--round-cap N] [--carry-check-cap USD]
           start the run (first call needs --plan), reprint open attempts, open the next
           phase, or write the gate after the last phase
  submit   --out DIR --phase P --voice native|outside --attempt ID (--result F | --record F)
           --model ID [--usage-usd USD] [--runner NAME] [--attest WHY]
           | --voice outside --unavailable WHY | --failed WHY
           bind one reviewer result to its attempt, exactly once
  answer   --out DIR --gate-rev N --reply TEXT [--by human|agent:ID] [--owner-reply TEXT |
           --owner-reply-file F | --owner-reply -] [--words-by agent:ID] [--rec-hash H]
           answer the gate: rec | rec except <id><option>... | as-is | <id><option>...
  revise   --out DIR --plan F [--incorporates ID,...] | --settle ID | --withdraw ID
           reopen every phase whose reviewed plan changed (plus eng); the next gate is
           gate_rev + 1; or settle / withdraw one accepted change without an edit
  recommend --out DIR --item ID --option KEY
           change one recommendation before relay (bumps rec_rev; rec needs --rec-hash)
  export   --out DIR     write every artifact and run.json, then validate them
  status   --out DIR     the run as the store holds it (reads only)
  resume   --out DIR [--from CKDIR/RUN]
           report attempts with no result, rewrite derived files, finish an export;
           with --from, first restore the newest valid checkpoint generation into DIR
  checkpoints --from CKDIR/RUN   list checkpoint generations and whether each verifies
  check    --out DIR --attempt ID (--result F --model M [--same-family WHY] | --unavailable WHY)
           bind the carry check of a post-cap plan change (CARRY_CHECK line)
  release  --out DIR --attempt ID   return an open attempt's reservation
  family   MODEL         the model family the conflict check uses

State: --state DIR, else LANEWARD_STATE_ROOT, else the root recorded in DIR/.laneward-run,
else .laneward/state. LANEWARD_SESSION_KIND: interactive|headless|spawned|unattended.
LANEWARD_CHECKPOINT_DIR: publish a checkpoint generation after every change.
Every command but status, checkpoints and family ends with
  GSTACK_RESULT: skill=autoplan status=<status> run=<dir>
Exit status: 0 ok, 1 failure, 2 usage, 3 refused (the code names why).`;

const COMMON = { out: { type: 'string' }, state: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } as const;

const MUTATING = new Set(['next', 'submit', 'answer', 'revise', 'recommend', 'release', 'export', 'check']);

function optionValue(args: readonly string[], name: string): string | undefined {
  const at = args.indexOf(name);
  if (at >= 0) return args[at + 1];
  return args.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
}


export async function planCommand(args: readonly string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    io.out(PLAN_HELP);
    return sub === undefined ? EXIT.usage : EXIT.ok;
  }
  if (sub === 'run') return (await import('./plan-run.ts')).planRunCommand.run(rest, io);
  const context = `laneward plan ${sub}`;
  const terminal = sub !== 'status' && sub !== 'family';
  let json = rest.includes('--json');
  let runDir = '-';
  try {
    const penvOf = (state: string | undefined): PlanEnv => ({ cwd: process.cwd(), env: process.env, state });
    let report: PlanReport;
    // A checkpoint directory that overlaps the run is refused before anything changes.
    const out = optionValue(rest, '--out');
    if (out !== undefined && MUTATING.has(sub)) {
      runDir = resolvePath(out);
      (await import('../plan/checkpoint.ts')).checkpointRoot(process.env, runDir);
    }
    switch (sub) {
      case 'next': {
        const { values } = strict(rest, {
          ...COMMON, plan: { type: 'string' }, ui: { type: 'boolean' }, 'no-ui': { type: 'boolean' },
          'developer-tool': { type: 'boolean' }, 'no-dx': { type: 'boolean' }, 'spend-cap': { type: 'string' },
          'estimate-usd': { type: 'string' }, redispatch: { type: 'string' }, 'ceo-only': { type: 'boolean' },
          'no-carry-forward': { type: 'boolean' }, 'round-cap': { type: 'string' }, 'carry-check-cap': { type: 'string' },
        });
        if (values.help) return help(io, PLAN_HELP);
        json = values.json === true;
        runDir = values.out === undefined ? '-' : resolvePath(values.out);
        const { planNext } = await import('../plan/next.ts');
        report = await planNext({
          out: values.out,
          ...(values.plan === undefined ? {} : { plan: values.plan }),
          ...flag('ui', values.ui, values['no-ui']),
          ...flag('dx', values['developer-tool'], values['no-dx']),
          ...money('spendCap', 'spend-cap', values['spend-cap']),
          ...money('estimateUsd', 'estimate-usd', values['estimate-usd']),
          ...(values.redispatch === undefined ? {} : { redispatch: values.redispatch }),
          ...(values['ceo-only'] === true ? { ceoOnly: true } : {}),
          ...(values['no-carry-forward'] === true ? { carryForward: false } : {}),
          ...(values['round-cap'] === undefined ? {} : { roundCap: intOption('round-cap', values['round-cap'], 1, 1000)! }),
          ...money('carryCheckCap', 'carry-check-cap', values['carry-check-cap']),
        }, penvOf(values.state));
        break;
      }
      case 'submit': {
        const { values } = strict(rest, {
          ...COMMON, phase: { type: 'string' }, voice: { type: 'string' }, attempt: { type: 'string' },
          result: { type: 'string' }, record: { type: 'string' }, model: { type: 'string' }, runner: { type: 'string' },
          'usage-usd': { type: 'string' }, attest: { type: 'string' }, unavailable: { type: 'string' }, failed: { type: 'string' },
        });
        if (values.help) return help(io, PLAN_HELP);
        json = values.json === true;
        runDir = values.out === undefined ? '-' : resolvePath(values.out);
        const { planSubmit } = await import('../plan/submit.ts');
        report = await planSubmit({
          out: values.out,
          phase: values.phase,
          voice: values.voice,
          ...defined({ attempt: values.attempt, result: values.result, record: values.record, model: values.model, runner: values.runner, attest: values.attest, unavailable: values.unavailable, failed: values.failed }),
          ...money('usageUsd', 'usage-usd', values['usage-usd']),
        }, penvOf(values.state));
        break;
      }
      case 'answer': {
        const { values } = strict(rest, {
          ...COMMON, 'gate-rev': { type: 'string' }, reply: { type: 'string' }, by: { type: 'string' },
          'owner-reply': { type: 'string' }, 'owner-reply-file': { type: 'string' }, 'words-by': { type: 'string' },
          'rec-hash': { type: 'string' },
        });
        if (values.help) return help(io, PLAN_HELP);
        json = values.json === true;
        runDir = values.out === undefined ? '-' : resolvePath(values.out);
        if (values['owner-reply'] !== undefined && values['owner-reply-file'] !== undefined) throw usage('--owner-reply and --owner-reply-file exclude each other');
        const ownerReply = values['owner-reply-file'] !== undefined ? readWords(values['owner-reply-file'])
          : values['owner-reply'] === '-' ? readWords(0) : values['owner-reply'];
        const { planAnswer } = await import('../plan/answer.ts');
        report = await planAnswer({
          out: values.out,
          gateRev: intOption('gate-rev', values['gate-rev'], 1, Number.MAX_SAFE_INTEGER),
          reply: values.reply,
          ...defined({ by: values.by, ownerReply, wordsBy: values['words-by'], recHash: values['rec-hash'] }),
        }, penvOf(values.state));
        break;
      }
      case 'checkpoints': {
        const { values } = strict(rest, { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' }, from: { type: 'string' } });
        if (values.help) return help(io, PLAN_HELP);
        if (values.from === undefined) throw usage('--from <checkpoint dir>/<run> is required');
        const { listGenerations } = await import('../plan/checkpoint.ts');
        const list = listGenerations(resolvePath(values.from));
        if (values.json) io.out(JSON.stringify({ generations: list }));
        else for (const g of list) io.out(`CHECKPOINT: gen=${g.name} seq=${g.seq} files=${g.files} status=${g.problem === null ? 'ok' : `invalid (${oneLine(g.problem)})`} current=${g.current ? 'yes' : 'no'}`);
        return EXIT.ok;
      }
      case 'export':
      case 'status':
      case 'resume': {
        const { values } = strict(rest, { ...COMMON, ...(sub === 'resume' ? { from: { type: 'string' } } : {}) } as typeof COMMON & { from: { type: 'string' } });
        if (values.help) return help(io, PLAN_HELP);
        json = values.json === true;
        runDir = values.out === undefined ? '-' : resolvePath(values.out);
        const penv = penvOf(values.state);
        if (sub === 'export') report = await (await import('../plan/export.ts')).planExport({ out: values.out }, penv);
        else if (sub === 'resume') report = await (await import('../plan/resume.ts')).planResume({ out: values.out, ...defined({ from: values.from }) }, penv);
        else report = (await import('../plan/status.ts')).planStatus({ out: values.out }, penv);
        break;
      }
      case 'revise': {
        const { values } = strict(rest, { ...COMMON, plan: { type: 'string' }, incorporates: { type: 'string' }, settle: { type: 'string' }, withdraw: { type: 'string' } });
        if (values.help) return help(io, PLAN_HELP);
        json = values.json === true;
        runDir = values.out === undefined ? '-' : resolvePath(values.out);
        const { planRevise } = await import('../plan/revise.ts');
        report = await planRevise({
          out: values.out,
          ...defined({ plan: values.plan, settle: values.settle, withdraw: values.withdraw }),
          ...(values.incorporates === undefined ? {} : { incorporates: values.incorporates.split(',').map((id) => id.trim()).filter((id) => id !== '') }),
        }, penvOf(values.state));
        break;
      }
      case 'recommend': {
        const { values } = strict(rest, { ...COMMON, item: { type: 'string' }, option: { type: 'string' } });
        if (values.help) return help(io, PLAN_HELP);
        json = values.json === true;
        runDir = values.out === undefined ? '-' : resolvePath(values.out);
        const { planRecommend } = await import('../plan/recommend.ts');
        report = await planRecommend({ out: values.out, ...defined({ item: values.item, option: values.option }) }, penvOf(values.state));
        break;
      }
      case 'check': {
        const { values } = strict(rest, { ...COMMON, attempt: { type: 'string' }, result: { type: 'string' }, model: { type: 'string' }, 'same-family': { type: 'string' }, unavailable: { type: 'string' } });
        if (values.help) return help(io, PLAN_HELP);
        json = values.json === true;
        runDir = values.out === undefined ? '-' : resolvePath(values.out);
        const { planCheck } = await import('../plan/carry-check.ts');
        report = await planCheck({ out: values.out, ...defined({ attempt: values.attempt, result: values.result, model: values.model, sameFamily: values['same-family'], unavailable: values.unavailable }) }, penvOf(values.state));
        break;
      }
      case 'release': {
        const { values } = strict(rest, { ...COMMON, attempt: { type: 'string' } });
        if (values.help) return help(io, PLAN_HELP);
        json = values.json === true;
        runDir = values.out === undefined ? '-' : resolvePath(values.out);
        report = await (await import('../plan/release.ts')).planRelease({ out: values.out, attempt: values.attempt }, penvOf(values.state));
        break;
      }
      case 'family': {
        const { values, positionals } = parseCommand(rest, { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } });
        if (values.help) return help(io, PLAN_HELP);
        if (positionals.length !== 1 || positionals[0]!.trim() === '') throw usage('expected exactly one model id');
        const { familyOf } = await import('../plan/families.ts');
        const answer = familyOf(positionals[0]!, process.env);
        if (values.json) io.out(JSON.stringify({ model: positionals[0], ...answer }));
        else io.out(`MODEL_FAMILY: ${oneLine(positionals[0]!)} family=${answer.family ?? 'unknown'} source=${answer.source ?? '-'}`);
        return EXIT.ok;
      }
      default:
        throw usage(`unknown plan command ${JSON.stringify(sub)}`);
    }
    if (json) io.out(JSON.stringify(reportJson(report)));
    else for (const line of reportLines(report, terminal)) io.out(line);
    return EXIT.ok;
  } catch (caught) {
    const error = isLanewardError(caught) ? caught : new LanewardError('INTERNAL', toError(caught).message);
    const exit = planExitStatus(error.code);
    const dir = runDir === '-' || error.code === 'USAGE' ? '-' : runDir;
    if (json) {
      io.out(JSON.stringify({ ok: false, status: 'refused', code: error.code, path: error.path, message: error.message, runDir: dir }));
    } else {
      io.err(renderIssueLine(context, issue(error.code, error.path, error.message)));
      // run=- when the refusal came before a run exists in that directory.
      const exists = dir !== '-' && existsSync(join(dir, '.laneward-run'));
      if (terminal && error.code !== 'USAGE') io.out(resultLine(exit === EXIT.refused ? 'refused' : 'interrupted', exists ? dir : '-'));
    }
    return exit;
  }
}

function strict<const O extends Parameters<typeof parseCommand>[1]>(args: readonly string[], options: O) {
  const parsed = parseCommand(args, options, false);
  return parsed;
}

function help(io: Io, text: string): number {
  io.out(text);
  return EXIT.ok;
}

function flag<K extends string>(key: K, on: boolean | undefined, off: boolean | undefined): Partial<Record<K, boolean>> {
  if (on === true && off === true) throw usage(`--${key === 'ui' ? 'ui' : 'developer-tool'} and its --no- form exclude each other`);
  if (on === true) return { [key]: true } as Record<K, boolean>;
  if (off === true) return { [key]: false } as Record<K, boolean>;
  return {};
}

function money<K extends string>(key: K, name: string, raw: string | undefined): Partial<Record<K, number>> {
  if (raw === undefined) return {};
  const value = /^\d{1,9}(\.\d{1,6})?$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isFinite(value)) throw usage(`expected --${name} to be dollars such as 2.50, got ${JSON.stringify(raw)}`);
  return { [key]: value } as Record<K, number>;
}

function defined<T extends Record<string, string | undefined>>(values: T): { [K in keyof T]?: string } {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as { [K in keyof T]?: string };
}

/** The owner's words from a file or stdin, verbatim but for one trailing newline. */
function readWords(source: string | number): string {
  let text: string;
  if (typeof source === 'string') {
    const read = tryReadBounded(source, 1024 * 1024);
    if (!read.ok) throw usage(`cannot read the owner's words: ${read.detail}`);
    text = read.bytes.toString('utf8');
  } else {
    try {
      text = readFileSync(source, 'utf8');
    } catch (error) {
      throw usage(`cannot read the owner's words from stdin: ${toError(error).message}`);
    }
  }
  if (text.length > 1024 * 1024) throw usage("the owner's words are over 1 MiB");
  return text.replace(/\r?\n$/, '');
}

function reportJson(report: PlanReport): Record<string, unknown> {
  return {
    ok: true,
    status: report.status,
    run: report.run,
    runDir: report.runDir,
    ...(report.stateRoot === undefined ? {} : { stateRoot: report.stateRoot }),
    notes: report.notes,
    phase: report.phase ?? null,
    attempts: report.attempts,
    spend: report.spend ?? null,
    bound: report.bound,
    closed: report.closed,
    executionUnknown: report.unknown,
    gate: report.gate ?? null,
    applied: report.applied,
    approved: report.approved,
    lines: report.after,
  };
}
