import { basename, relative, resolve, sep } from 'node:path';
import { generateKeyPairSync } from 'node:crypto';
import { EXIT } from '../../formats/codes/codes.ts';
import { LanewardError } from '../../formats/codes/error.ts';
import { isLaneId } from '../../formats/crew/file.ts';
import { isPresetName, PRESET_NAMES, type PresetName } from '../../formats/providers/names.ts';
import { jsonLine } from '../../formats/text/one-line.ts';
import { signatureText } from '../actions/signature.ts';
import { shellWord } from '../crew/retry-advice.ts';
import { defaultFixtures } from '../demo/demo-crew.ts';
import { gitFailure, gitSync } from '../git/run-git.ts';
import { crewFiles, observerPreset, type InitProviders } from '../init/crew-files.ts';
import { MAX_TASK_CHARS, MAX_TASK_FILE_BYTES, parseTaskList } from '../init/task-list.ts';
import { tryReadBounded } from '../fs/read-bounded.ts';
import { writeCrewDir } from '../init/write-crew.ts';
import { usage } from './args.ts';
import { command } from './command.ts';

export const INIT_HELP = `usage: laneward init --repo DIR (--tasks FILE | --task TEXT ...) [--providers LIST]
                     [--out DIR] [--crew NAME] [--json]

Writes a ready crew for a git repository and a task list, then prints the one command
that runs it. One lane per task; each lane's agent works in its own worktree of the
repository on the branch laneward/<crew>/<run id>/<lane id>.

  --repo DIR        the git work tree the agents work in (it needs a commit); the crew
                    file names it relative to its own directory
  --tasks FILE      one task per line (lines starting with # are skipped), or a Markdown
                    list: each "- task", "* task", "+ task", "1. task" or "1) task" is one,
                    indented lines under an item continue it, other lines are skipped
  --task TEXT       one task; repeat it for more (not with --tasks)
  --providers LIST  comma-separated presets (claude-code, codex, gemini-cli; default
                    claude-code,codex): the first reviews natively, the second (else the
                    first) reviews from outside, the first of claude-code or codex observes
                    (gemini-cli's stream names no tools for the observer's policy), agents
                    take them in turn by lane; or fixtures: laneward's own fixture reviewers, observer and
                    agent, for a crew that runs with nothing installed
  --out DIR         the crew's directory (default laneward-crew); it must not exist or be
                    empty
  --crew NAME       the crew's name (default: the repository's directory name)

Writes into DIR: keys/actions.key and keys/actions.pub (an Ed25519 pair, the key 0600),
actions.json and actions.json.sig (the review, observe and agent actions, signed: leases
renewed by the presets' own streams, or by the fixtures' marks), plans/task-<n>.md (a
title, "## Implementation plan" holding the task's words, "## Review record") and
crew.json (the runners, each preset's default model, prices for the models whose CLIs
report tokens, "workspace", "answer": "as-is", limits with spend_cap_usd 20 for presets).
Everything is written into a new directory beside DIR and renamed into place at once:
init never replaces anything, and a DIR that holds anything is refused (INIT_EXISTS,
naming what is in the way) before a byte is written.

Lines: INIT: crew=<name> dir=<DIR> lanes=<n> providers=<list>, INIT_FILE: <path> per
file, then INIT_RUN: <the command that runs the crew> and, for presets,
INIT_REHEARSE: <the same with --rehearse> (no key, no spend: docs/crews.md).
--json prints one object {crew, dir, lanes, providers, files, run, rehearse}.
Exit status: 0 written, 2 a bad command line, a task list with no task, a repository
that is not a git work tree (USAGE), or DIR in the way (INIT_EXISTS).`;

/** The directory init writes when --out is not given. */
export const DEFAULT_INIT_DIR = 'laneward-crew';

function providersOf(raw: string | undefined): InitProviders {
  if (raw === 'fixtures') return 'fixtures';
  const names = (raw ?? 'claude-code,codex').split(',').map((s) => s.trim());
  const bad = names.find((n) => !isPresetName(n));
  if (bad !== undefined) throw usage(`--providers: ${JSON.stringify(bad)} is not a preset (${PRESET_NAMES.join(', ')}) nor fixtures`);
  const unique = [...new Set(names as PresetName[])];
  if (unique.length !== names.length) throw usage('--providers names a preset twice');
  if (observerPreset(unique) === null) throw usage(`--providers ${unique.join(',')}: add claude-code or codex, one of which observes (gemini-cli's stream names no tools for the observer's policy)`);
  return unique;
}

function tasksOf(file: string | undefined, given: readonly string[] | undefined): string[] {
  if (file !== undefined && given !== undefined) throw usage('give --tasks FILE or --task TEXT, not both');
  if (file === undefined && given === undefined) throw usage('init needs --tasks FILE or --task TEXT');
  let tasks: readonly string[];
  if (file !== undefined) {
    // A task list is the user's file, read as every input laneward does not own: a FIFO,
    // a device or a directory is refused rather than read (a FIFO would hang `init`), and
    // bytes that are not UTF-8 are refused rather than turned into U+FFFD in a plan.
    const read = tryReadBounded(file, MAX_TASK_FILE_BYTES);
    if (!read.ok) throw new LanewardError('USAGE', `--tasks ${read.detail}`, { path: file });
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(read.bytes);
    } catch {
      throw new LanewardError('USAGE', `--tasks ${file} is not UTF-8 text`, { path: file });
    }
    if (text.includes('\u0000')) throw new LanewardError('USAGE', `--tasks ${file} holds NUL bytes (a binary file)`, { path: file });
    const list = parseTaskList(text);
    if (!list.ok) throw new LanewardError('USAGE', `--tasks ${file} line ${list.line}: ${list.problem}`, { path: file });
    tasks = list.tasks;
  } else {
    tasks = given!.map((t) => t.replace(/\s+/g, ' ').trim());
    if (tasks.some((t) => t === '')) throw usage('--task is empty');
    const long = tasks.find((t) => t.length > MAX_TASK_CHARS);
    if (long !== undefined) throw usage(`--task is ${long.length} characters, over ${MAX_TASK_CHARS}`);
  }
  if (tasks.length === 0) throw new LanewardError('USAGE', `--tasks ${file}: no task in it (one per line, or a Markdown list)`, { path: file ?? '' });
  return [...tasks];
}

/** The repository's top level: a work tree with a commit, else a usage error naming --repo. */
function repoTop(repo: string): string {
  const top = gitSync(['rev-parse', '--show-toplevel'], { cwd: repo });
  if (top.status !== 0) throw new LanewardError('USAGE', `--repo ${repo} is not a git work tree (${gitFailure(['rev-parse'], top)})`, { path: repo });
  const head = gitSync(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], { cwd: repo });
  if (head.status !== 0) throw new LanewardError('USAGE', `--repo ${repo} has no commit yet: the lanes' worktrees start at HEAD`, { path: repo });
  return top.stdout.trim();
}

/** A crew name from a directory's name: the characters a crew name allows, else "crew". */
export function crewNameOf(dir: string): string {
  const name = basename(dir).replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[._-]+/, '').slice(0, 63);
  return isLaneId(name) ? name : 'crew';
}

/** A path as the user would type it from here: relative when inside the current directory. */
function fromHere(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel !== '' && !rel.startsWith('..') && !rel.startsWith(sep) ? rel : path;
}

export const INIT = command({
  name: 'init',
  help: INIT_HELP,
  options: {
    repo: { type: 'string' },
    tasks: { type: 'string' },
    task: { type: 'string', multiple: true },
    providers: { type: 'string' },
    out: { type: 'string' },
    crew: { type: 'string' },
    json: { type: 'boolean' },
  },
  positionals: false,
  run: ({ values }, io) => {
    const cwd = process.cwd();
    if (values.repo === undefined) throw usage('init needs --repo DIR: the git work tree the agents work in');
    const providers = providersOf(values.providers);
    const tasks = tasksOf(values.tasks, values.task);
    const repo = repoTop(resolve(cwd, values.repo));
    const crew = values.crew ?? crewNameOf(repo);
    if (!isLaneId(crew)) throw usage(`--crew ${JSON.stringify(crew)}: letters, digits, '.', '_' or '-', at most 63, not starting with '.', '_' or '-'`);
    const dir = resolve(cwd, values.out ?? DEFAULT_INIT_DIR);
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const files = crewFiles(
      { crew, repo: relative(dir, repo) || '.', tasks, providers, fixtures: defaultFixtures(), node: process.execPath },
      {
        privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
        publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
        sign: (bytes) => signatureText(bytes, privateKey),
      },
    );
    writeCrewDir(dir, files);
    const crewFile = shellWord(fromHere(resolve(dir, 'crew.json'), cwd));
    const run = `laneward crew run ${crewFile}`;
    const rehearse = providers === 'fixtures' ? null : `${run} --rehearse`;
    const named = providers === 'fixtures' ? 'fixtures' : providers.join(',');
    const paths = files.map((f) => resolve(dir, f.path));
    if (values.json === true) {
      io.out(jsonLine({ crew, dir, lanes: tasks.length, providers: named, files: paths, run, rehearse }));
      return EXIT.ok;
    }
    io.out(`INIT: crew=${crew} dir=${shellWord(dir)} lanes=${tasks.length} providers=${named}`);
    for (const path of paths) io.out(`INIT_FILE: ${shellWord(path)}`);
    io.out(`INIT_RUN: ${run}`);
    if (rehearse !== null) io.out(`INIT_REHEARSE: ${rehearse}`);
    return EXIT.ok;
  },
});
