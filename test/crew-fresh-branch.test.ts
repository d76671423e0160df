import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { writeDemoCrew } from '../main/demo/demo-crew.ts';
import { openStore } from '../main/store/store.ts';
import { ensureBuilt, laneward } from './helpers/cli.ts';
import { killStrays } from './helpers/procs.ts';
import { baseRepo, git } from './helpers/git.ts';
import { tempRoot } from './helpers/tmp.ts';

// A crew's lanes start from the base this crew run resolved, on branches of this run:
// the same crew name run again on the same repository never continues what another run left.

const root = tempRoot('crew-fresh-branch');
const fixtures = join(import.meta.dirname, '..', 'fixtures');
let serial = 0;

beforeAll(() => ensureBuilt());
afterEach(() => {
  expect(killStrays(root)).toEqual([]);
});

function repo(): string {
  return baseRepo(join(root, `repo-${++serial}`)).dir;
}

/**
 * An agent that appends a line to work.txt each turn and finishes at turn `finishAt`.
 * With `killAt`, that turn (the first time, while `flag` is absent) SIGKILLs the crew
 * that runs it, after it changed the worktree: a crew killed mid-turn.
 */
function agentScript(name: string, options: { finishAt: number; killAt?: number; flag?: string }): string {
  const file = join(root, `${name}.sh`);
  const kill = options.killAt === undefined ? '' : `if [ "$turn" = ${options.killAt} ] && [ ! -e '${options.flag}' ]; then : > '${options.flag}'; kill -9 $PPID; exit 1; fi\n`;
  writeFileSync(
    file,
    `#!/bin/sh\n{ printf '\\001' >&3; } 2>/dev/null\nturn=$(sed -n 's/^# Lane .*, turn \\([0-9]*\\)$/\\1/p' "$1")\necho "turn $turn" >> work.txt\n${kill}` +
      `if [ "$turn" -ge ${options.finishAt} ]; then fin=true; else fin=false; fi\nprintf '{"text":"turn %s","diff":true,"finish":%s}' "$turn" "$fin" > "$2"\n`,
  );
  chmodSync(file, 0o755);
  return file;
}

/** A one-lane instant crew named `name` on `repoDir`, in a directory of its own (its own out and state root). */
function crew(name: string, repoDir: string, agent: string) {
  const dir = join(root, `crew-${++serial}`);
  const file = writeDemoCrew({ dir, crew: name, lanes: 1, broken: 0, concurrency: 2, fixtures, instant: true });
  const value = JSON.parse(readFileSync(file, 'utf8'));
  value.workspace = { repo: repoDir };
  value.runners.agent = [agent, '{prompt}', '{result}'];
  writeFileSync(file, JSON.stringify(value));
  return { dir, file, state: join(dir, 'state') };
}

const field = (line: string, name: string) => new RegExp(`(?:^| )${name}=(\\S+)`).exec(line)?.[1];
const laneLine = (stdout: string) => stdout.split('\n').find((l) => l.startsWith('CREW_LANE: '))!;
const RUN_BRANCH = (crewName: string, lane: string) => new RegExp(`^laneward/${crewName}/\\d{8}T\\d{6}Z-[0-9a-f]{6}/${lane}$`);

describe('a fresh branch per crew run', () => {
  test('should start a second crew of the same name on the same repository from the base as it is now, never from the first crew\'s branch', () => {
    const r = repo();
    const agent = agentScript('agent-once', { finishAt: 1 });
    const first = crew('calc', r, agent);
    const ran1 = laneward(['crew', 'run', first.file, '--state', first.state], { cwd: first.dir });
    expect(ran1.code, ran1.stdout + ran1.stderr).toBe(0);
    const branch1 = field(laneLine(ran1.stdout), 'branch')!;
    expect(branch1).toMatch(RUN_BRANCH('calc', 'lane-1'));

    // The base moves on; a second crew of the same name runs on the same repository.
    writeFileSync(join(r, 'b.txt'), 'newer\n');
    git(r, 'add', '.');
    git(r, 'commit', '-qm', 'newer base');
    const newer = git(r, 'rev-parse', 'HEAD');
    const second = crew('calc', r, agent);
    const ran2 = laneward(['crew', 'run', second.file, '--state', second.state], { cwd: second.dir });
    expect(ran2.code, ran2.stdout + ran2.stderr).toBe(0);
    const line2 = laneLine(ran2.stdout);
    const branch2 = field(line2, 'branch')!;
    expect(branch2).toMatch(RUN_BRANCH('calc', 'lane-1'));
    expect(branch2).not.toBe(branch1);
    // Its one turn sits right on the newer base, and none of the first crew's turns is on it.
    expect(git(r, 'log', '--format=%s', `${newer}..${branch2}`)).toBe('laneward: lane-1 turn 1');
    expect(git(r, 'rev-parse', `${branch2}^`)).toBe(newer);
    expect(git(r, 'show', `${branch2}:work.txt`)).toBe('turn 1');
    expect(field(line2, 'head')).toBe(git(r, 'rev-parse', branch2));
    // The first crew's branch is left as it was.
    expect(git(r, 'rev-parse', `${branch1}^`)).not.toBe(newer);
  }, 180_000);

  test('should continue its own branch when a crew killed mid-turn is started again', () => {
    const r = repo();
    const base = git(r, 'rev-parse', 'HEAD');
    const flag = join(root, `killed-${serial}`);
    const c = crew('again', r, agentScript('agent-kill', { finishAt: 3, killAt: 2, flag }));
    const killed = laneward(['crew', 'run', c.file, '--state', c.state], { cwd: c.dir, timeoutMs: 60_000 });
    expect(killed.signal, killed.stdout + killed.stderr).toBe('SIGKILL');
    expect(existsSync(flag)).toBe(true);
    const store = openStore(c.state, { readOnly: true });
    const before = store.crewLanes.get(['again', 'lane-1'])!;
    const runId = store.crewRuns.get('again')!.runId;
    expect(before.branch).toBe(`laneward/again/${runId}/lane-1`);
    expect(before.turnsDispatched).toBe(2);

    const resumed = laneward(['crew', 'run', c.file, '--state', c.state], { cwd: c.dir, timeoutMs: 60_000 });
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    const line = laneLine(resumed.stdout);
    expect(field(line, 'status')).toBe('complete');
    expect(field(line, 'branch')).toBe(before.branch);
    // One branch for the lane, from the base, holding turn 1 from before the kill and the turns after it.
    expect(git(r, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/laneward/again/')).toBe(before.branch);
    const turns = git(r, 'log', '--reverse', '--format=%s', `${base}..${before.branch}`).split('\n');
    expect(turns[0]).toBe('laneward: lane-1 turn 1');
    expect(turns.at(-1)).toBe('laneward: lane-1 turn 3');
    expect(git(r, 'show', `${before.branch}:work.txt`).split('\n')).toEqual(['turn 1', 'turn 2', 'turn 3']);
  }, 180_000);
});
