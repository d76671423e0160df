import { parseArgs } from 'node:util';
import { toError } from '../formats/codes/error.ts';

export const SUITES = ['validate', 'lease', 'runs', 'crew', 'console'] as const;
export type Suite = (typeof SUITES)[number];

export const BENCH_HELP = `usage: npm run bench -- [SUITE...] [options]

Suites (default: all, in this order): ${SUITES.join(', ')}.

  validate  --runs N (1000) --run-kb N (300) --big-mb N (1024) --e2e-runs N (2000)
            --e2e-run-kb N (178) --e2e-samples N (7) --start-samples N (30)
            --only a|b|c|d|e (one figure)
  lease     --samples N (40) --fleet N (200)
  runs      --plan-runs N (100) --procs N (4) --findings N (5000)
  crew      --crew-lanes N (200) [--queue]: with --queue, the same crew over Redis with 1,
            2 and 3 workers against a local run (--queue-lanes N, 60), Redis commands per attempt
  console   --console-lanes N (5000) --viewers N (200) --window-s N (20): bytes per viewer
            at steady state, and lanes/min with that many viewers against none
  --help    this text

Ratios are against baselines measured in the same run. Exit status: 0 done, 2 a bad
command line.`;

/** The validate suite's figures, for --only. */
const FIGURES: readonly string[] = ['a', 'b', 'c', 'd', 'e'];

/** Every whole-number option, with its default. */
const NUMBERS = {
  runs: '1000',
  'run-kb': '300',
  'big-mb': '1024',
  'e2e-runs': '2000',
  'e2e-run-kb': '178',
  'e2e-samples': '7',
  'start-samples': '30',
  samples: '40',
  fleet: '200',
  'plan-runs': '100',
  procs: '4',
  findings: '5000',
  'crew-lanes': '200',
  'console-lanes': '5000',
  viewers: '200',
  'window-s': '20',
  'queue-lanes': '60',
} as const;

export type BenchNumbers = { readonly [K in keyof typeof NUMBERS]: number };

export type BenchArgs =
  | { readonly kind: 'help' }
  | { readonly kind: 'usage'; readonly message: string }
  | { readonly kind: 'run'; readonly suites: readonly Suite[]; readonly numbers: BenchNumbers; readonly only: string | undefined; readonly queue: boolean };

/** The bench's command line, checked once: a bad flag or value is a usage error, never a stack trace. */
export function parseBenchArgs(args: readonly string[]): BenchArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      allowPositionals: true,
      strict: true,
      options: {
        ...Object.fromEntries(Object.keys(NUMBERS).map((name) => [name, { type: 'string' as const }])),
        only: { type: 'string' },
        queue: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    return { kind: 'usage', message: toError(error).message.split('. ')[0] ?? 'bad command line' };
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  if (values['help'] === true) return { kind: 'help' };
  const unknown = parsed.positionals.find((suite) => !(SUITES as readonly string[]).includes(suite));
  if (unknown !== undefined) return { kind: 'usage', message: `unknown suite ${JSON.stringify(unknown)}; expected one of ${SUITES.join(', ')}` };
  const numbers: Record<string, number> = {};
  for (const [name, fallback] of Object.entries(NUMBERS)) {
    const given = values[name];
    const text = typeof given === 'string' ? given : fallback;
    if (!/^[1-9][0-9]{0,8}$/.test(text)) return { kind: 'usage', message: `--${name} expects a positive whole number, got ${JSON.stringify(text)}` };
    numbers[name] = Number(text);
  }
  const only = typeof values['only'] === 'string' ? values['only'] : undefined;
  if (only !== undefined && !FIGURES.includes(only)) return { kind: 'usage', message: `--only expects one of ${FIGURES.join(', ')}, got ${JSON.stringify(only)}` };
  return {
    kind: 'run',
    suites: parsed.positionals.length === 0 ? [...SUITES] : (parsed.positionals as Suite[]),
    numbers: numbers as BenchNumbers,
    only,
    queue: values['queue'] === true,
  };
}
