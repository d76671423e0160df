import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { crewReply, shell } from '../fixtures/model-server/crew-script.ts';
import { startModelServer, type ModelServer } from '../fixtures/model-server/index.ts';
import { ensureBuilt } from './helpers/cli.ts';
import { gitOut, gitRepo, laneLines, lanewardAsync, realCrew } from './helpers/real-crew.ts';

// The lane's record is the repository's: what a real agent does with git in its worktree
// (its own commits, an amend, a file over the crew's size limit) is what the lane says.

let root: string;
let server: ModelServer;
beforeAll(async () => {
  ensureBuilt();
  root = mkdtempSync(join(tmpdir(), 'laneward-real-record-'));
  server = await startModelServer((r) => crewReply(r));
});
afterAll(async () => {
  await server?.close();
  if (process.env['KEEP_ROOT'] === undefined) rmSync(root, { recursive: true, force: true });
  else console.error(`ROOT ${root}`);
});

const AS_AGENT = "git -c user.name=agent -c user.email=agent@localhost";
/** 11 MiB: over the default limits.max_file_bytes (10 MiB). */
const ELEVEN_MIB = 11 * 1024 * 1024;

/** What each lane's agent runs in its turn `n` (one shell command). */
function command(lane: string, n: number): string {
  if (lane === 'lane-1') return n === 1 ? `printf 'one\\n' >> NOTES.md && git add -A && ${AS_AGENT} commit -qm 'the agent commits' && git branch agent-side` : `${AS_AGENT} commit --amend -qm 'the agent amended'`;
  if (lane === 'lane-2') return `mkdir -p data/deep && head -c ${ELEVEN_MIB} /dev/zero > data/deep/big.bin && printf 'two\\n' >> NOTES.md`;
  return `head -c ${ELEVEN_MIB} /dev/zero > big.bin && git add -A && ${AS_AGENT} commit -qm 'the agent commits a big file'`;
}

describe('real CLIs: the lane record is the repository', () => {
  test("head= is the branch tip after the agent's own commit and amend; a turn adding a file over 10 MiB is WORKSPACE_TOO_LARGE, named, with nothing of it on the branch", async () => {
    server.setScript((request) => {
      // An observer's prompt quotes the agent's turns: it is answered as an observer.
      if (request.allUserText.includes('laneward QA observer')) return crewReply(request);
      const turn = /^# Lane (\S+), turn (\d+)$/m.exec(request.prompt) ?? /^# Lane (\S+), turn (\d+)$/m.exec(request.allUserText);
      if (turn !== null && request.toolResult === undefined) return shell(request.api, command(turn[1]!, Number(turn[2])));
      return crewReply(request);
    });
    const repo = gitRepo(join(root, 'repo'));
    const base = gitOut(repo, 'rev-parse', 'HEAD');
    const crew = realCrew(root, server.url, {
      crew: 'record',
      lanes: 3,
      roles: { native: 'claude-code', outside: 'codex', observer: 'claude-code', agent: 'claude-code' },
      workspace: repo,
      // What an uncontained agent does with git: under the sandbox its own commits are refused (test/real-sandbox.test.ts).
      sandbox: 'off',
    });
    const report = join(root, 'report.json');
    const ran = await lanewardAsync(['crew', 'run', crew.file, '--state', crew.state, '--report', report], { cwd: root, timeoutMs: 280_000 }).done;
    const lanes = Object.fromEntries(laneLines(ran.stdout).map((l) => [l['lane']!, l]));
    const out = ran.stdout + ran.stderr;
    expect(ran.code, out).toBe(1);

    const one = lanes['lane-1']!;
    expect(one['status'], out).toBe('complete');
    // The agent's amend moved the branch without changing a file: head= follows it.
    expect(one['head']).toBe(gitOut(repo, 'rev-parse', one['branch']!));
    expect(gitOut(repo, 'log', '--format=%s', `${base}..${one['branch']}`)).toBe('the agent amended');
    // Uncontained, the agent's branch of its own is the lane's record too (its own lane branch moving is not).
    const record = JSON.parse(readFileSync(report, 'utf8')).lanes.find((l: { lane: string }) => l.lane === 'lane-1');
    expect(record.sandbox_refusals).toEqual([{ turn: 1, read_only_writes: 0, refs_moved: ['refs/heads/agent-side'], contained: false }]);

    for (const [id, file] of [['lane-2', 'data/deep/big.bin'], ['lane-3', 'big.bin']] as const) {
      const lane = lanes[id]!;
      expect(`${lane['status']} ${lane['code']}`, out).toBe('failed WORKSPACE_TOO_LARGE');
      expect(ran.stdout).toMatch(new RegExp(`^CREW_LANE: lane=${id} .* detail=turn 1 of lane ${id} adds ${file.replace('.', '\\.')} of ${ELEVEN_MIB} bytes, over the crew's limits\\.max_file_bytes 10485760; nothing of it was committed`, 'm'));
      // Nothing of the turn is on the branch, the agent's own commit included; the file stays in the worktree.
      expect(gitOut(repo, 'rev-parse', lane['branch']!)).toBe(base);
      expect(lane['head']).toBe(base);
      expect(gitOut(join(root, 'runs', id, 'worktree'), 'status', '--porcelain', '--untracked-files=all')).toContain(file);
    }
  }, 300_000);
});
