import { availableParallelism } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { EXIT } from '../../formats/codes/codes.ts';
import { crewRun } from '../crew/crew-run.ts';
import { brokenLanes, writeDemoCrew } from '../demo/demo-crew.ts';
import { interruptSignal } from '../interrupt.ts';
import { intOption, usage } from './args.ts';
import { demoClis, writeRealDemo } from '../demo/real-crew.ts';
import { command } from './command.ts';
import { crewExit } from './crew.ts';
import { DEFAULT_INIT_DIR } from './init.ts';
import { crewPrinter } from './crew-lines.ts';
import { shellWord } from '../crew/retry-advice.ts';
import { configuredStateRoot, defaultStateRoot } from '../plan/index.ts';

export const CREW_DEMO_HELP = `usage: laneward demo crew [--lanes N] [--broken N] [--concurrency N] [--dir DIR]
                          [--state DIR] [--serve PORT] [--providers fixtures|real] [--json]

The main job (npm start): writes a fresh crew under DIR (default .laneward/demo) with a
signing key, three signed actions, one plan per lane and fixture reviewers, observer and
agent, then runs it with laneward crew run on the state root (default .laneward/state).
--lanes N (default 50) lanes, --broken N of them given a failing fixture (a stalled or
crashing reviewer, a malformed result, a crashing agent, a failing observer; default 0),
--concurrency N children at once (default 4 per core).
--providers real runs the real claude-code and codex CLIs instead of fixtures (--lanes
default 4, --broken 0): native reviews and the observer by claude-code, outside reviews by
codex, agents alternating codex and claude-code, each lane in its own worktree of a small
git repository the demo makes, all against a model server of the demo's own on loopback
(no key, no network). CLIs not found (PATH, node_modules, the per-user cache of laneward
providers --help) are installed at their pinned versions into that cache first, said on
stderr.
Ends with the CREW_SUMMARY: line, a DEMO: line and three DEMO_NEXT: lines on stderr, the
commands to try next: this crew's status, laneward init for a crew of your own, and its
rehearsal with no key. Exit 0 when exactly the lanes broken on purpose failed, each with
a typed code, and every other lane is complete.`;

/**
 * What a newcomer types after the demo: the crew just run, from its store; a crew of their
 * own from a task list; and its rehearsal, with no key (the directory init writes by default).
 */
export function nextCommands(file: string, state: string | undefined): string[] {
  const cwd = process.cwd();
  const root = configuredStateRoot(state, process.env, cwd)?.path ?? defaultStateRoot(cwd);
  const here = (path: string) => shellWord(relative(cwd, path).startsWith('..') ? path : relative(cwd, path) || '.');
  return [
    `laneward crew status ${here(file)} --state ${here(root)}`,
    'laneward init --repo DIR --tasks tasks.txt --providers claude-code,codex',
    `laneward crew run ${DEFAULT_INIT_DIR}/crew.json --rehearse`,
  ];
}

export const CREW_DEMO = command({
  name: 'crew',
  help: CREW_DEMO_HELP,
  options: {
    lanes: { type: 'string' },
    broken: { type: 'string' },
    concurrency: { type: 'string' },
    dir: { type: 'string' },
    state: { type: 'string' },
    serve: { type: 'string' },
    providers: { type: 'string' },
    json: { type: 'boolean' },
  },
  positionals: false,
  run: async ({ values }, io) => {
    const real = values.providers === 'real';
    if (values.providers !== undefined && !real && values.providers !== 'fixtures') throw usage(`--providers must be fixtures or real, not ${JSON.stringify(values.providers)}`);
    const lanes = intOption('lanes', values.lanes, 1, 100_000) ?? (real ? 4 : 50);
    const broken = intOption('broken', values.broken, 0, lanes) ?? 0;
    if (real && broken > 0) throw usage('--broken is for the fixture crew; --providers real breaks no lane');
    const threads = Math.max(1, availableParallelism());
    const concurrency = intOption('concurrency', values.concurrency, 1, 1024) ?? 4 * threads;
    const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '-');
    const name = `demo-${stamp}-${process.pid}`;
    const dir = resolve(values.dir ?? join('.laneward', 'demo'), name);
    const demo = real ? await writeRealDemo({ dir, crew: name, lanes, concurrency: Math.min(concurrency, 4), bins: await demoClis(process.cwd(), process.env, io) }) : undefined;
    const file = demo?.file ?? writeDemoCrew({ dir, crew: name, lanes, broken, concurrency });
    io.err(`DEMO: crew ${name}: ${lanes} lanes (${broken} broken on purpose)${real ? ` of real claude-code and codex CLIs against ${demo!.server.url}` : ''} in ${dir}`);
    const interrupt = interruptSignal();
    try {
      const result = await crewRun(
        {
          file,
          cwd: process.cwd(),
          env: process.env,
          state: values.state,
          threads,
          deadlineMs: undefined,
          serve: intOption('serve', values.serve, 0, 65_535),
          report: join(dir, 'report.json'),
          cancel: interrupt.signal,
        },
        crewPrinter(io, values.json === true),
      );
      if (result.stoppedBy !== null) return crewExit(result);
      const expected = new Set(real ? [] : brokenLanes(file));
      const failed = result.lanes.filter((l) => l.stage !== 'complete');
      const asExpected = failed.length === expected.size && failed.every((l) => expected.has(l.lane) && l.code !== null);
      io.err(`DEMO: ${result.tally.complete} complete, ${failed.length} failed, ${expected.size} broken on purpose: ${asExpected ? 'as expected' : 'UNEXPECTED'} (report ${join(dir, 'report.json')})`);
      for (const next of nextCommands(file, values.state)) io.err(`DEMO_NEXT: ${next}`);
      return asExpected ? EXIT.ok : EXIT.fail;
    } finally {
      interrupt.release();
      await demo?.server.close();
    }
  },
});
