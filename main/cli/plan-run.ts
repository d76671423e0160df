import { existsSync } from 'node:fs';
import { join, resolve as resolvePath } from 'node:path';
import { EXIT } from '../../formats/codes/codes.ts';
import { isLanewardError, LanewardError, toError } from '../../formats/codes/error.ts';
import { exitStatus, planExitStatus } from '../../formats/codes/exit-status.ts';
import { fixClause, issue, renderIssueLine } from '../../formats/codes/issue.ts';
import { jsonLine, oneLine } from '../../formats/text/one-line.ts';
import { MAX_TIMER_MS } from '../../formats/supervision/limits.ts';
import type { PlanRunEvent, PlanRunReport } from '../plan/index.ts';
import { factLine, reportLines, resultLine } from './plan-lines.ts';
import { stopWords } from './plan-stop-lines.ts';
import { intOption, minutesOption, usage } from './args.ts';
import { command, type Command } from './command.ts';
import { interruptSignal } from '../interrupt.ts';
import * as v from 'valibot';
import { presetRunnerSchema, pricesSchema, type RunnerConfig } from '../../formats/providers/runner.ts';
import { runnerProgram } from '../providers/runner-program.ts';
import type { Prices } from '../providers/cost.ts';
import { tryReadBounded } from '../fs/read-bounded.ts';

export const PLAN_RUN_HELP = `usage: laneward plan run --out DIR [--plan F] --native 'CMD {prompt} {result}'
                         --outside 'CMD {prompt} {result}' --actions F --trust PUB --action NAME
                         [--native-model M] [--outside-model M] [--prices F] [--spend-cap USD]
                         [--timeout-ms N]
                         [--grace-ms N] [--teardown-ms N] [--deadline TIME] [--state DIR] [--json]

Drives the review run in DIR to its gate: plan next, then both voices of the open phase
at once, each a supervised command run as the signed action NAME (its timeout mode and
budgets; --timeout-ms is each provider's lease or total deadline, default 600000). An ok
command's result file is submitted; any other end (a timeout, a crash, a refused result)
closes that voice as a typed failure in the journal, never retried. Repeats until
gate_pending, complete or reviewed. The first run on DIR needs --plan.

The command templates are split into words without a shell ('...' and "..." quote,
\\ escapes); {prompt} and {result} are replaced inside each word with the attempt's
files. The child also gets LANEWARD_ATTEMPT, LANEWARD_PROMPT_FILE and LANEWARD_RESULT_FILE.
A provider preset may stand instead of a template, as a JSON object:
--native '{"preset":"claude-code","model":"claude-sonnet-4-5"}' (presets claude-code, codex,
gemini-cli; "args", "env" and "bin" optional): its CLI is found as laneward providers finds
it, reads the prompt on stdin, and its final reply becomes the result unless it wrote the
result file itself; its session, tokens and cost are journaled with the outcome and its
cost settles the spend ledger (claude reports one; for the others --prices F, a JSON
object of model -> {"input": USD, "output": USD, "cached_input": USD} per million tokens).
--spend-cap USD sets the run's spend cap at its first next (as plan next --spend-cap): a
phase the cap cannot fund is refused SPEND_CAP_EXCEEDED (exit 3) before it dispatches.
--deadline TIME (90s, 5m, 1h, 500ms; a bare number is minutes, as before) cancels the
children still running at expiry and ends the run interrupted (exit 124); a signal does
the same (exit 128+n).

Lines: the plan lines of each step, and DISPATCH: <attempt> phase=<p> voice=<v>,
OUTCOME: <attempt> phase=<p> voice=<v> status=<s> code=<code|-> child_exit=<n|-> marks=<n>
duration_ms=<n> cleanup=confirmed|unproven [session=<id> tokens=<in>/<out> cost_usd=<usd|->
retry_after_s=<s>] (the bracket for a preset), VOICE: <attempt> ... status=failed|unavailable|cancelled
code=<code>, RESUMED: <attempt> ... result=found|missing, INTERRUPTED: reason=deadline|signal,
STOPPED: <why>; then the run's status lines and GSTACK_RESULT: skill=autoplan status=<s> run=<dir>.
One plan run drives a run at a time: a second one while the first runs is refused (RUN_BUSY,
exit 3) before it dispatches anything. A voice this run cancelled (deadline, signal, stdout
closed) is no failure: the next plan run on DIR dispatches it again as a new attempt.
--json prints one object on stdout instead (progress lines go to stderr).
Exit: 0 at the gate (or complete/reviewed), 1 when a failed native voice stops the run,
124 on --deadline, 128+n on signal n, 2 usage, 3 refused.`;

const OPTIONS = {
  out: { type: 'string' },
  plan: { type: 'string' },
  native: { type: 'string' },
  outside: { type: 'string' },
  'native-model': { type: 'string' },
  'outside-model': { type: 'string' },
  prices: { type: 'string' },
  'spend-cap': { type: 'string' },
  actions: { type: 'string' },
  trust: { type: 'string' },
  action: { type: 'string' },
  'timeout-ms': { type: 'string' },
  'grace-ms': { type: 'string' },
  'teardown-ms': { type: 'string' },
  deadline: { type: 'string' },
  state: { type: 'string' },
  json: { type: 'boolean' },
} as const;

/** Two voices run at once: the whole of one phase. */
const VOICES_AT_ONCE = 2;

export const planRunCommand: Command = command({
  name: 'run',
  help: PLAN_RUN_HELP,
  options: OPTIONS,
  positionals: false,
  run: async ({ values }, io) => {
    const json = values.json === true;
    let runDir = '-';
    try {
      const need = (name: 'out' | 'native' | 'outside' | 'actions' | 'trust' | 'action') => {
        const value = values[name];
        if (value === undefined || value === '') throw usage(`--${name} is required`);
        return value;
      };
      const out = need('out');
      runDir = resolvePath(out);
      const plan = await import('../plan/index.ts');
      const { splitTemplate } = plan;
      const native = runnerOption('native', need('native'), splitTemplate);
      const outside = runnerOption('outside', need('outside'), splitTemplate);
      const prices = values.prices === undefined ? undefined : readPrices(values.prices);
      const spendCap = values['spend-cap'] === undefined ? undefined : usdOption(values['spend-cap']);
      const deadlineMs = minutesOption('deadline', values.deadline);
      const planEnv = plan.readPlanEnv(process.env, process.cwd(), values.state);
      plan.checkpointRoot(planEnv.settings.checkpointDir, runDir);
      const { planRun } = plan;
      const { createInProcessDispatcher } = await import('../dispatch/dispatcher.ts');
      const dispatcher = createInProcessDispatcher({ limit: VOICES_AT_ONCE });
      const interrupt = interruptSignal();
      const progress = (line: string) => (json ? io.err(oneLine(line)) : io.out(oneLine(line)));
      let report: PlanRunReport;
      try {
        report = await planRun(
          {
            out,
            ...(values.plan === undefined ? {} : { plan: values.plan }),
            native,
            outside,
            nativeModel: values['native-model'] ?? 'unknown-native',
            outsideModel: values['outside-model'] ?? 'unknown-outside',
            action: need('action'),
            actionsFile: need('actions'),
            trust: need('trust'),
            ...defined({
              timeoutMs: intOption('timeout-ms', values['timeout-ms'], 1, MAX_TIMER_MS),
              graceMs: intOption('grace-ms', values['grace-ms'], 0, MAX_TIMER_MS),
              teardownMs: intOption('teardown-ms', values['teardown-ms'], 1, MAX_TIMER_MS),
              deadlineMs,
            }),
            ...(prices === undefined ? {} : { prices }),
            ...(spendCap === undefined ? {} : { spendCap }),
            cancel: interrupt.signal,
            onEvent: (event) => {
              for (const line of eventLines(event)) progress(line);
            },
          },
          planEnv,
          dispatcher.supervise,
        );
      } finally {
        await dispatcher.close();
        interrupt.release();
      }
      const exit = report.interrupted === 'deadline' ? exitStatus('DEADLINE_EXPIRED')
        : report.interrupted === 'cancel' ? exitStatus('CANCELLED', { cancelSignal: String(interrupt.signal.reason) })
        : report.stopped !== null ? EXIT.fail
        : EXIT.ok;
      if (json) io.out(jsonLine(runJson(report, exit)));
      else for (const line of reportLines(report, true)) io.out(line);
      return exit;
    } catch (caught) {
      const error = isLanewardError(caught) ? caught : new LanewardError('INTERNAL', toError(caught).message);
      const exit = planExitStatus(error.code);
      const dir = runDir === '-' || error.code === 'USAGE' ? '-' : runDir;
      if (json) {
        io.out(jsonLine({ ok: false, status: 'refused', code: error.code, path: error.path, message: error.message, fix: fixClause(error.code, 'laneward plan run'), runDir: dir }));
      } else {
        io.err(renderIssueLine('laneward plan run', issue(error.code, error.path, error.message)));
        const exists = dir !== '-' && existsSync(join(dir, '.laneward-run'));
        if (error.code !== 'USAGE') io.out(resultLine(exit === EXIT.refused ? 'refused' : 'interrupted', exists ? dir : '-'));
      }
      return exit;
    }
  },
});

/** The progress lines of one event. */
export function eventLines(event: PlanRunEvent): string[] {
  switch (event.type) {
    case 'report':
      return reportLines(event.report, false);
    case 'dispatched':
      return [`DISPATCH: ${event.attempt} phase=${event.phase} voice=${event.voice}`];
    case 'outcome': {
      const o = event.outcome;
      // A preset's call adds what its stream said: session, tokens, cost, a rate limit's retry-after.
      const preset =
        o.session === undefined
          ? ''
          : ` session=${o.session === null ? '-' : oneLine(o.session)} tokens=${o.usage == null ? '-' : `${o.usage.input}/${o.usage.output}`} cost_usd=${o.cost_usd ?? '-'}` +
            (o.rate_limit === undefined ? '' : ` retry_after_s=${o.rate_limit.retry_after_s ?? '-'}`);
      return [`OUTCOME: ${event.attempt} phase=${event.phase} voice=${event.voice} status=${o.status} code=${o.code ?? '-'} child_exit=${o.child_exit ?? '-'} marks=${o.marks} duration_ms=${o.duration_ms} cleanup=${o.cleanup_confirmed ? 'confirmed' : 'unproven'}${preset}`];
    }
    case 'resumed':
      return [`RESUMED: ${event.attempt} phase=${event.phase} voice=${event.voice} result=${event.result ? 'found' : 'missing'}`];
    case 'orphan':
      return [`ORPHAN: ${event.attempt} phase=${event.phase} voice=${event.voice} pid=${event.pid ?? '-'} how=${event.how} code=${event.code ?? '-'} cleanup=${event.cleanup ? 'confirmed' : 'unproven'}`];
    case 'interrupted':
      return [`INTERRUPTED: reason=${event.reason === 'deadline' ? 'deadline' : 'signal'}`];
    case 'stopped':
      return [`STOPPED: ${oneLine(stopWords(event.stop))}`];
  }
}

function runJson(report: PlanRunReport, exit: number): Record<string, unknown> {
  return {
    ok: exit === EXIT.ok,
    status: report.status,
    exitCode: exit,
    run: report.run,
    runDir: report.runDir,
    interrupted: report.interrupted,
    stopped: report.stopped === null ? null : stopWords(report.stopped),
    attempts: report.ends,
    spend: report.spend ?? null,
    gate: report.gate ?? null,
    lines: report.notes.map(factLine),
  };
}

function defined<T extends Record<string, number | undefined>>(values: T): { [K in keyof T]?: number } {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as { [K in keyof T]?: number };
}

/**
 * A runner option: a JSON preset object when it starts with `{`, else an argv template.
 * A preset's CLI is looked up now, so a missing one is a usage error before any dispatch.
 */
function runnerOption(name: string, text: string, split: (option: string, text: string) => string[]): RunnerConfig {
  if (!text.trimStart().startsWith('{')) return split(name, text);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw usage(`--${name} starts with { but is not one JSON object`);
  }
  const parsed = v.safeParse(presetRunnerSchema, value);
  if (!parsed.success) throw usage(`--${name}: ${v.getDotPath(parsed.issues[0]) ?? 'preset'}: ${parsed.issues[0].message}`);
  const checked = runnerProgram(parsed.output, process.cwd(), process.env);
  if (checked.problem !== null) throw usage(`--${name}: ${checked.problem}`);
  return checked.runner;
}


function readPrices(file: string): Prices {
  const read = tryReadBounded(resolvePath(file), 1024 * 1024);
  if (!read.ok) throw usage(`--prices ${file}: ${read.detail}`);
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(read.bytes).toString('utf8'));
  } catch {
    throw usage(`--prices ${file}: not one JSON document`);
  }
  const parsed = v.safeParse(pricesSchema, value);
  if (!parsed.success) throw usage(`--prices ${file}: ${v.getDotPath(parsed.issues[0]) ?? '(top level)'}: ${parsed.issues[0].message}`);
  return parsed.output;
}

function usdOption(text: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n < 0) throw usage(`--spend-cap takes dollars, a number >= 0, not ${JSON.stringify(text)}`);
  return n;
}
