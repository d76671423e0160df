import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { ensureBuilt } from './helpers/cli.ts';
import { gitOut, gitRepo, laneLines, lanewardAsync } from './helpers/real-crew.ts';
import { tempRoot } from './helpers/tmp.ts';

// The "done when": from a repository and a task file, `laneward init` and then the
// command it prints with --rehearse complete a 5-lane crew of the real claude-code and
// codex CLIs (test/real-clis, on PATH as a user's would be), with no key set and no file
// written by hand.

const root = tempRoot('real-init');
beforeAll(() => ensureBuilt());

/** The environment of a user with no key at all. */
const NO_KEYS = { ANTHROPIC_API_KEY: undefined, OPENAI_API_KEY: undefined, GEMINI_API_KEY: undefined, GOOGLE_API_KEY: undefined, CODEX_HOME: undefined, CLAUDE_CONFIG_DIR: undefined };

describe('laneward init then crew run --rehearse', () => {
  test('should complete a 5-lane crew of the real CLIs with no key and no file written by hand', async () => {
    const repo = gitRepo(join(root, 'repo'));
    const cwd = join(root, 'work');
    mkdirSync(cwd);
    writeFileSync(join(cwd, 'tasks.txt'), 'Add a cache\nWrite the docs\nFix the bug\nAdd a test\nRename the module\n');
    const init = await lanewardAsync(['init', '--repo', repo, '--tasks', 'tasks.txt', '--providers', 'claude-code,codex'], { cwd, env: NO_KEYS, timeoutMs: 60_000 }).done;
    expect(init.code, init.stderr).toBe(0);
    const rehearse = /^INIT_REHEARSE: laneward (.+)$/m.exec(init.stdout)?.[1];
    expect(rehearse).toBe('crew run laneward-crew/crew.json --rehearse');
    // The printed command as printed; its state root is the default one under cwd.
    const ran = await lanewardAsync(rehearse!.split(' '), { cwd, env: NO_KEYS, timeoutMs: 400_000 }).done;
    const lanes = laneLines(ran.stdout).sort((a, b) => a['lane']!.localeCompare(b['lane']!));
    expect(lanes.map((l) => `${l['lane']} ${l['status']}`), ran.stdout + ran.stderr).toEqual(['task-1', 'task-2', 'task-3', 'task-4', 'task-5'].map((id) => `${id} complete`));
    expect(ran.stdout).toMatch(/^CREW_SUMMARY: lanes=5 complete=5 failed=0 interrupted=0 /m);
    expect(ran.stderr).toMatch(/^CREW_REHEARSAL: model_server=http:\/\/127\.0\.0\.1:\d+$/m);
    expect(ran.code).toBe(0);
    for (const lane of lanes) {
      const id = lane['lane']!;
      // The crew run's id (minted at its first start on the state root) is in every branch.
      const branch = lane['branch']!;
      expect(branch).toMatch(new RegExp(`^laneward/repo-rehearsal/\\d{8}T\\d{6}Z-[0-9a-f]{6}/${id}$`));
      expect(lane['run']).toBe(join(cwd, 'laneward-crew', 'runs-rehearsal', id));
      // Each agent used its CLI's own shell tool in its worktree, once per turn, committed by the lane.
      expect(gitOut(repo, 'show', `${branch}:NOTES.md`)).toBe(`lane ${id} turn 1\nlane ${id} turn 2`);
    }
    // Nothing of the real crew: no run directory, no branch.
    expect(existsSync(join(cwd, 'laneward-crew', 'runs'))).toBe(false);
    expect(gitOut(repo, 'branch', '--list', 'laneward/repo/*')).toBe('');
    const validated = await lanewardAsync(['artifact', 'validate', join(cwd, 'laneward-crew', 'runs-rehearsal')], { cwd, timeoutMs: 60_000 }).done;
    expect(validated.stdout).toMatch(/^ARTIFACT_SUMMARY: runs=5 valid=5 invalid=0/m);
  }, 500_000);
});
