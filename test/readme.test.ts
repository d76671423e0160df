import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { ensureBuilt, ROOT } from './helpers/cli.ts';
import { CLI_BIN } from './helpers/real-crew.ts';
import { redisMissing } from './helpers/redis.ts';
import { tempRoot } from './helpers/tmp.ts';

// Every `sh` block of README.md, run as written, in order, in one bash as a user pasting
// them would, in a stand-in for a fresh clone after `npm ci && npm run build`: a temp
// directory whose dist/, fixtures/, node_modules/ and package.json are the checkout's
// (symlinks), so everything the blocks write stays in the temp directory.
//
// Two kinds of block are not run, and no other:
// - `sh setup` (npm ci, npm start, npm test): the stand-in clone is that setup done.
// - `sh machines` (crew worker on other machines, a Redis at a LAN address); the block
//   before it runs the same on one machine, with redis-server (apt) on a loopback port.
// The real agent CLIs are the pinned ones of test/real-clis, on PATH, so the README's
// `laneward providers --install` finds them instead of downloading them; no key is set.

interface Block {
  readonly info: string;
  readonly line: number;
  readonly text: string;
}

/** The fenced blocks of a Markdown text whose info string starts with `sh`. */
export function shellBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(sh(?: \w+)?)\s*$/.exec(lines[i]!);
    if (open === null) continue;
    const end = lines.indexOf('```', i + 1);
    blocks.push({ info: open[1]!, line: i + 1, text: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return blocks;
}

const NOT_RUN = new Set(['sh setup', 'sh machines']);
// The queue block starts a redis-server of its own, as every queue test does.
const SKIP = redisMissing();
if (SKIP !== undefined) console.warn(`README.md blocks not run: ${SKIP}`);
const root = tempRoot('readme');
beforeAll(() => ensureBuilt());

describe('README.md', () => {
  const blocks = shellBlocks(readFileSync(join(ROOT, 'README.md'), 'utf8'));

  test('should mark only setup and other machines as not run', () => {
    expect([...new Set(blocks.map((b) => b.info))].sort()).toEqual(['sh', 'sh machines', 'sh setup']);
    expect(blocks.filter((b) => b.info === 'sh').length).toBeGreaterThanOrEqual(5);
    // The setup block is only npm's commands.
    for (const block of blocks.filter((b) => b.info === 'sh setup')) expect(block.text.split('\n').every((l) => /^npm (ci|start|test)\b/.test(l))).toBe(true);
  });

  test.skipIf(SKIP !== undefined)('should run every sh block as written, in order, on a fresh clone with no key', async () => {
    const clone = join(root, 'clone');
    mkdirSync(clone);
    for (const entry of ['dist', 'fixtures', 'node_modules', 'package.json']) symlinkSync(join(ROOT, entry), join(clone, entry));
    const run = blocks.filter((b) => !NOT_RUN.has(b.info));
    // An unmarked setup command would run npm over the checkout's node_modules (a symlink here): refused first.
    expect(run.filter((b) => /\bnpm (ci|install|i|test|start)\b/.test(b.text)).map((b) => b.line)).toEqual([]);
    // Between blocks, a marker line: which block ran, and that bash got that far.
    const script = ['set -e', ...run.flatMap((b) => [`echo "README_BLOCK: line=${b.line}"`, b.text]), 'echo README_END'].join('\n');
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${CLI_BIN}:${process.env['PATH'] ?? ''}`, NO_COLOR: '1' };
    for (const key of ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'GEMINI_API_KEY', 'GOOGLE_API_KEY', 'CODEX_HOME', 'CLAUDE_CONFIG_DIR', 'LANEWARD_STATE_ROOT']) delete env[key];
    // Its own process group: a block that hangs is killed with everything it started.
    const child = spawn('bash', ['-c', script], { cwd: clone, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    // A block that leaves a process holding bash's stdout hangs the run: killed, and said so.
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      process.kill(-child.pid!, 'SIGKILL');
    }, 500_000);
    const code = await new Promise<number | null>((ok) => child.on('close', ok));
    clearTimeout(timer);
    // What a block left running when bash stopped (a failed block's Redis or worker) goes too.
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // Nothing left in the group.
    }
    const tail = `${stdout.slice(-3000)}\n--- stderr ---\n${stderr.slice(-3000)}`;
    expect(timedOut, tail).toBe(false);
    expect(code, tail).toBe(0);
    expect(stdout.match(/^README_BLOCK: line=\d+$/gm)?.length).toBe(run.length);
    expect(stdout).toMatch(/^README_END$/m);
    // What the blocks say they print.
    expect(stdout).toMatch(/^GSTACK_RESULT: .*status=gate_pending/m);
    expect(stdout).toMatch(/^INIT_RUN: laneward crew run laneward-crew\/crew\.json$/m);
    expect(stdout.match(/^ARTIFACT_SUMMARY: runs=3 valid=3 invalid=0/gm)?.length).toBe(2);
    expect(stdout).toMatch(/^CREW_STATUS: crew=\S+ run=done /m);
    expect(stdout).toMatch(/^CREW_SUMMARY: lanes=3 complete=3 failed=0 interrupted=0 /m);
    expect(stdout).toMatch(/^CREW_CLEAN_SUMMARY: jobs=3 removed=3 kept=0$/m);
    expect(stdout).toMatch(/^INIT_REHEARSE: laneward crew run laneward-crew\/crew\.json --rehearse$/m);
    expect(stdout).toMatch(/^CREW_SUMMARY: lanes=2 complete=2 failed=0 interrupted=0 /m);
    expect(stdout).toMatch(/^CREW_LANE: lane=task-1 status=complete .* branch=laneward\/repo-rehearsal\/\d{8}T\d{6}Z-[0-9a-f]{6}\/task-1 /m);
  }, 520_000);
});
