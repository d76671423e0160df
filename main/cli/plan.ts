import { resolve as resolvePath } from 'node:path';
import { EXIT } from '../../formats/codes/codes.ts';
import { jsonLine, oneLine } from '../../formats/text/one-line.ts';
import { intOption, usage } from './args.ts';
import { command, group } from './command.ts';
import { PLAN_FAILURE, reportCommand } from './plan-command.ts';
import { PLAN_HELP } from './plan-help.ts';
import { planRunCommand } from './plan-run.ts';
import { defined, flag, money, readWords } from './plan-options.ts';

// Each engine module loads only when its command runs: the store and the schemas are costly.

const NEXT = reportCommand({
  name: 'next',
  mutating: true,
  options: {
    plan: { type: 'string' }, ui: { type: 'boolean' }, 'no-ui': { type: 'boolean' },
    'developer-tool': { type: 'boolean' }, 'no-dx': { type: 'boolean' }, 'spend-cap': { type: 'string' },
    'estimate-usd': { type: 'string' }, redispatch: { type: 'string' }, 'ceo-only': { type: 'boolean' },
    'no-carry-forward': { type: 'boolean' }, 'round-cap': { type: 'string' }, 'carry-check-cap': { type: 'string' },
  },
  run: async (values, planEnv) =>
    (await import('../plan/index.ts')).planNext({
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
    }, planEnv),
});

const SUBMIT = reportCommand({
  name: 'submit',
  mutating: true,
  options: {
    phase: { type: 'string' }, voice: { type: 'string' }, attempt: { type: 'string' },
    result: { type: 'string' }, record: { type: 'string' }, model: { type: 'string' }, runner: { type: 'string' },
    'usage-usd': { type: 'string' }, attest: { type: 'string' }, unavailable: { type: 'string' }, failed: { type: 'string' },
  },
  run: async (values, planEnv) =>
    (await import('../plan/index.ts')).planSubmit({
      out: values.out,
      phase: values.phase,
      voice: values.voice,
      ...defined({ attempt: values.attempt, result: values.result, record: values.record, model: values.model, runner: values.runner, attest: values.attest, unavailable: values.unavailable, failed: values.failed }),
      ...money('usageUsd', 'usage-usd', values['usage-usd']),
    }, planEnv),
});

const ANSWER = reportCommand({
  name: 'answer',
  mutating: true,
  options: {
    'gate-rev': { type: 'string' }, reply: { type: 'string' }, by: { type: 'string' },
    'owner-reply': { type: 'string' }, 'owner-reply-file': { type: 'string' }, 'words-by': { type: 'string' },
    'rec-hash': { type: 'string' },
  },
  run: async (values, planEnv) => {
    if (values['owner-reply'] !== undefined && values['owner-reply-file'] !== undefined) throw usage('--owner-reply and --owner-reply-file exclude each other');
    const ownerReply = values['owner-reply-file'] !== undefined ? readWords(values['owner-reply-file'])
      : values['owner-reply'] === '-' ? readWords(0) : values['owner-reply'];
    return (await import('../plan/index.ts')).planAnswer({
      out: values.out,
      gateRev: intOption('gate-rev', values['gate-rev'], 1, Number.MAX_SAFE_INTEGER),
      reply: values.reply,
      ...defined({ by: values.by, ownerReply, wordsBy: values['words-by'], recHash: values['rec-hash'] }),
    }, planEnv);
  },
});

const REVISE = reportCommand({
  name: 'revise',
  mutating: true,
  options: { plan: { type: 'string' }, incorporates: { type: 'string' }, settle: { type: 'string' }, withdraw: { type: 'string' } },
  run: async (values, planEnv) =>
    (await import('../plan/index.ts')).planRevise({
      out: values.out,
      ...defined({ plan: values.plan, settle: values.settle, withdraw: values.withdraw }),
      ...(values.incorporates === undefined ? {} : { incorporates: values.incorporates.split(',').map((id) => id.trim()).filter((id) => id !== '') }),
    }, planEnv),
});

const RECOMMEND = reportCommand({
  name: 'recommend',
  mutating: true,
  options: { item: { type: 'string' }, option: { type: 'string' } },
  run: async (values, planEnv) => (await import('../plan/index.ts')).planRecommend({ out: values.out, ...defined({ item: values.item, option: values.option }) }, planEnv),
});

const EXPORT = reportCommand({
  name: 'export',
  mutating: true,
  options: {},
  run: async (values, planEnv) => (await import('../plan/index.ts')).planExport({ out: values.out }, planEnv),
});

const STATUS = reportCommand({
  name: 'status',
  mutating: false,
  options: {},
  run: async (values, planEnv) => (await import('../plan/index.ts')).planStatus({ out: values.out }, planEnv),
});

const RESUME = reportCommand({
  name: 'resume',
  mutating: false,
  options: { from: { type: 'string' } },
  run: async (values, planEnv) => (await import('../plan/index.ts')).planResume({ out: values.out, ...defined({ from: values.from }) }, planEnv),
});

const CHECK = reportCommand({
  name: 'check',
  mutating: true,
  options: { attempt: { type: 'string' }, result: { type: 'string' }, model: { type: 'string' }, 'same-family': { type: 'string' }, unavailable: { type: 'string' } },
  run: async (values, planEnv) =>
    (await import('../plan/index.ts')).planCheck({ out: values.out, ...defined({ attempt: values.attempt, result: values.result, model: values.model, sameFamily: values['same-family'], unavailable: values.unavailable }) }, planEnv),
});

const RELEASE = reportCommand({
  name: 'release',
  mutating: true,
  options: { attempt: { type: 'string' } },
  run: async (values, planEnv) => (await import('../plan/index.ts')).planRelease({ out: values.out, attempt: values.attempt }, planEnv),
});

const CHECKPOINTS = command({
  name: 'checkpoints',
  help: PLAN_HELP,
  options: { json: { type: 'boolean' }, from: { type: 'string' } },
  positionals: false,
  run: async ({ values }, io) => {
    if (values.from === undefined) throw usage('--from <checkpoint dir>/<run> is required');
    const list = (await import('../plan/index.ts')).listGenerations(resolvePath(values.from));
    if (values.json) io.out(jsonLine({ generations: list }));
    else for (const g of list) io.out(`CHECKPOINT: gen=${g.name} seq=${g.seq} files=${g.files} status=${g.problem === null ? 'ok' : `invalid (${oneLine(g.problem)})`} current=${g.current ? 'yes' : 'no'}`);
    return EXIT.ok;
  },
});

const FAMILY = command({
  name: 'family',
  help: PLAN_HELP,
  options: { json: { type: 'boolean' } },
  run: async ({ values, positionals }, io) => {
    if (positionals.length !== 1 || positionals[0]!.trim() === '') throw usage('expected exactly one model id');
    const answer = (await import('../plan/index.ts')).readPlanSettings(process.env, process.cwd()).familyOf(positionals[0]!);
    if (values.json) io.out(jsonLine({ model: positionals[0], ...answer }));
    else io.out(`MODEL_FAMILY: ${oneLine(positionals[0]!)} family=${oneLine(answer.family ?? 'unknown')} source=${oneLine(answer.source ?? '-')}`);
    return EXIT.ok;
  },
});

/**
 * `laneward plan <command>`: a durable two-voice review run, one command per step. A
 * command defined in a module of its own is one more entry in `commands`.
 */
export const PLAN = group({
  name: 'plan',
  help: PLAN_HELP,
  commands: [NEXT, SUBMIT, ANSWER, REVISE, RECOMMEND, EXPORT, STATUS, RESUME, CHECKPOINTS, CHECK, RELEASE, FAMILY, planRunCommand],
  unknownNoun: 'plan command',
  failure: PLAN_FAILURE,
});
