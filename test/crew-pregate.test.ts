import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { writeDemoCrew } from '../main/demo/demo-crew.ts';
import { ensureBuilt, laneward } from './helpers/cli.ts';
import { canRun, killStrays } from './helpers/procs.ts';
import { baseRepo, git } from './helpers/git.ts';
import { tempRoot } from './helpers/tmp.ts';

// From done to landed, the first half: the repository's checks at the lane's head
// (pregate.json, PREGATE:), and a receipt bound to that head (ship-run.json,
// SHIP_RECEIPT:, GSTACK_RESULT: skill=ship), stale once the branch moves.

const root = tempRoot('crew-pregate');
const fixtures = join(import.meta.dirname, '..', 'fixtures');
let serial = 0;

beforeAll(() => ensureBuilt());
afterEach(() => {
  expect(killStrays(root)).toEqual([]);
});

function repo(): { dir: string; base: string } {
  return baseRepo(join(root, `repo-${++serial}`));
}

/** An agent that appends a line to work.txt and reports finish every turn. */
const agent = join(root, 'agent.sh');
writeFileSync(agent, `#!/bin/sh\n{ printf '\\001' >&3; } 2>/dev/null\necho line >> work.txt\nprintf '{"text":"added a line","diff":true,"finish":true}' > "$2"\n`);
chmodSync(agent, 0o755);
/** The repository's check: passes once work.txt has two lines, says how many it saw otherwise. */
const check = join(root, 'check-lines.sh');
writeFileSync(check, `#!/bin/sh\nn=$(wc -l < work.txt)\nif [ "$n" -ge 2 ]; then echo "ok $n"; exit 0; fi\necho "want 2 lines, found $n" >&2\nexit 4\n`);
chmodSync(check, 0o755);

function crew(repoDir: string, extra: Record<string, unknown>) {
  const dir = join(root, `crew-${++serial}`);
  const name = `p${serial}`;
  const file = writeDemoCrew({ dir, crew: name, lanes: 1, broken: 0, concurrency: 2, fixtures, instant: true });
  const value = JSON.parse(readFileSync(file, 'utf8'));
  value.workspace = { repo: repoDir };
  value.runners.agent = [agent, '{prompt}', '{result}'];
  Object.assign(value, extra);
  writeFileSync(file, JSON.stringify(value));
  return { dir, file, name, state: join(dir, 'state'), runDir: join(dir, 'runs', 'lane-1') };
}

const field = (line: string, name: string) => new RegExp(`(?:^| )${name}=(\\S+)`).exec(line)?.[1];
const ours = (stdout: string) => stdout.split('\n').filter((l) => /^(PREGATE|SHIP_RECEIPT|GSTACK_RESULT|CREW_LANE): /.test(l));

describe('pregate at the lane head', () => {
  test('should give a failed check back to the agent as guidance, pass at the fixed head, and bind a valid receipt to it', () => {
    const r = repo();
    const c = crew(r.dir, { pregate: [{ id: 'lines', argv: [check], tier: 'unit' }] });
    const ran = laneward(['crew', 'run', c.file, '--state', c.state], { cwd: c.dir, timeoutMs: 90_000 });
    expect(ran.code, ran.stdout + ran.stderr).toBe(0);
    const lines = ours(ran.stdout);
    const lane = lines.at(-1)!;
    expect(field(lane, 'status')).toBe('complete');
    const branch = field(lane, 'branch')!;
    const head = git(r.dir, 'rev-parse', branch);
    const tree = git(r.dir, 'rev-parse', `${branch}^{tree}`);
    const turn1 = git(r.dir, 'rev-parse', `${branch}^`);
    const pregateFile = join(c.runDir, 'pregate.json');
    // The session kind is the one the lane's review run recorded.
    const kind = JSON.parse(readFileSync(join(c.runDir, 'run.json'), 'utf8')).session_kind;
    expect(kind).toMatch(/^(interactive|headless|spawned|unattended)$/);
    expect(lines.map((l) => l.replace(/ ms=\d+ /, ' ms=N '))).toEqual([
      `PREGATE: lane=lane-1 status=fail head=${turn1.slice(0, 12)} tree=${git(r.dir, 'rev-parse', `${turn1}^{tree}`).slice(0, 12)} checks=1 failed=lines ms=N file=${pregateFile}`,
      `PREGATE: lane=lane-1 status=pass head=${head.slice(0, 12)} tree=${tree.slice(0, 12)} checks=1 failed=- ms=N file=${pregateFile}`,
      `SHIP_RECEIPT: lane=lane-1 head=${head.slice(0, 12)} base=${r.base.slice(0, 12)} tree=${tree.slice(0, 12)} branch=${branch} spend_usd=0.000000 session_kind=${kind}`,
      `GSTACK_RESULT: skill=ship status=complete run=${c.runDir}`,
      lane,
    ]);
    // Two turns: the second one was told what the check said.
    expect(git(r.dir, 'log', '--format=%s', `${r.base}..${branch}`).split('\n')).toEqual(['laneward: lane-1 turn 2', 'laneward: lane-1 turn 1']);
    const prompts = readdirSync(join(c.runDir, 'agent')).filter((f) => f.includes('2') && f.endsWith('.md')).map((f) => readFileSync(join(c.runDir, 'agent', f), 'utf8'));
    expect(prompts.join('\n')).toContain('lines (' + check + ') fail: exit 4: want 2 lines, found 1');

    const pregate = JSON.parse(readFileSync(pregateFile, 'utf8'));
    expect(pregate).toMatchObject({ schema_version: 1, tree, head, checks: [{ id: 'lines', status: 'pass', tier: 'unit', exit_code: 0 }] });
    expect(typeof pregate.checks[0].ms).toBe('number');
    expect(laneward(['artifact', 'validate', pregateFile, '--as', 'pregate']).code).toBe(0);

    const receiptFile = join(c.runDir, 'ship-run.json');
    const receipt = JSON.parse(readFileSync(receiptFile, 'utf8'));
    expect(receipt).toMatchObject({ schema_version: 1, head, base: r.base, gated_tree: tree, branch, repo: r.dir, lane: 'lane-1', crew: c.name, session_kind: kind, spend_usd: 0, run: c.runDir, receipt: 'ship-receipt.md' });
    expect(receipt.review_loop).toMatchObject({ status: 'complete', gate_rev: 1 });
    expect(typeof receipt.review_loop.findings).toBe('number');
    expect(laneward(['artifact', 'validate', receiptFile, '--as', 'ship-receipt']).code).toBe(0);
    expect(readFileSync(join(c.runDir, 'ship-receipt.md'), 'utf8')).toContain(lines[2]!);

    // Current while the branch's tip is its head; a commit on the branch makes it stale.
    const current = laneward(['crew', 'status', c.file, '--state', c.state], { cwd: c.dir });
    expect(current.code, current.stderr).toBe(0);
    expect(current.stdout.split('\n')).toContain(`CREW_RECEIPT: lane=lane-1 status=current head=${head.slice(0, 12)} tip=${head.slice(0, 12)} branch=${branch}`);
    git(r.dir, 'commit', '-q', '--allow-empty', '-m', 'moved after the receipt');
    const moved = git(r.dir, 'rev-parse', 'HEAD');
    git(r.dir, 'update-ref', `refs/heads/${branch}`, git(r.dir, 'commit-tree', '-p', head, '-m', 'someone else', `${head}^{tree}`));
    const tip = git(r.dir, 'rev-parse', branch);
    expect(moved).not.toBe(tip);
    const stale = laneward(['crew', 'status', c.file, '--state', c.state], { cwd: c.dir });
    expect(stale.code).toBe(3);
    expect(stale.stdout.split('\n')).toContain(`CREW_RECEIPT: lane=lane-1 status=stale head=${head.slice(0, 12)} tip=${tip.slice(0, 12)} branch=${branch}`);
    expect(stale.stderr).toMatch(/^laneward crew status: .* \(QUEUE_RECEIPT_STALE\)\n$/);
    expect(stale.stderr).toContain(`lane lane-1: the receipt binds ${head.slice(0, 12)} but ${branch} is at ${tip.slice(0, 12)} at ${receiptFile}`);
  }, 180_000);

  test('should fail the lane PREGATE_FAILED when the check still fails and no turn is left, with no receipt', () => {
    const r = repo();
    const c = crew(r.dir, { pregate: [{ argv: [check] }, { argv: ['true'] }], limits: { agent_turns: 1 } });
    const ran = laneward(['crew', 'run', c.file, '--state', c.state], { cwd: c.dir, timeoutMs: 90_000 });
    expect(ran.code, ran.stdout + ran.stderr).toBe(1);
    const lines = ours(ran.stdout);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^PREGATE: lane=lane-1 status=fail head=[0-9a-f]{12} tree=[0-9a-f]{12} checks=2 failed=check-1 ms=\d+ file=/);
    expect(field(lines[1]!, 'status')).toBe('failed');
    expect(field(lines[1]!, 'code')).toBe('PREGATE_FAILED');
    const pregate = JSON.parse(readFileSync(join(c.runDir, 'pregate.json'), 'utf8'));
    expect(pregate.checks.map((k: { id: string; status: string }) => [k.id, k.status])).toEqual([['check-1', 'fail'], ['check-2', 'pass']]);
    expect(existsSync(join(c.runDir, 'ship-run.json'))).toBe(false);
  }, 180_000);

  test('should refuse a pregate without a workspace, and a check that is not an argv, at load (CREW_INVALID, exit 2)', () => {
    const r = repo();
    const noWorkspace = crew(r.dir, { pregate: [{ argv: ['true'] }] });
    const value = JSON.parse(readFileSync(noWorkspace.file, 'utf8'));
    delete value.workspace;
    writeFileSync(noWorkspace.file, JSON.stringify(value));
    const refused = laneward(['crew', 'run', noWorkspace.file, '--state', noWorkspace.state], { cwd: noWorkspace.dir });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/pregate: the checks run in each lane's worktree at its head, and the crew file names no workspace.*\(CREW_INVALID\)\n$/);
    const shell = crew(r.dir, { pregate: [{ argv: 'npm test' }] });
    const bad = laneward(['crew', 'run', shell.file, '--state', shell.state], { cwd: shell.dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/pregate\.0\.argv: .*\(CREW_INVALID\)\n$/);
  }, 180_000);

  test('should tear down, proven gone, the check a SIGKILLed crew left running before it runs the pregate again', () => {
    const r = repo();
    const pidfile = join(root, `check-pid-${serial}`);
    // First run: the check records its pid, SIGKILLs the crew that runs it at once (before
    // the crew could save anything of its spawn) and lives on as its orphan.
    const orphaning = join(root, `orphaning-check-${serial}.sh`);
    writeFileSync(orphaning, `#!/bin/sh\nif [ ! -e '${pidfile}' ]; then echo $$ > '${pidfile}'; kill -9 $PPID; exec sleep 60; fi\nexit 0\n`);
    chmodSync(orphaning, 0o755);
    const c = crew(r.dir, { pregate: [{ argv: [orphaning] }] });
    const killed = laneward(['crew', 'run', c.file, '--state', c.state], { cwd: c.dir, timeoutMs: 60_000 });
    expect(killed.signal, killed.stdout + killed.stderr).toBe('SIGKILL');
    const orphan = Number(readFileSync(pidfile, 'utf8'));
    expect(canRun(orphan)).toBe(true);
    const resumed = laneward(['crew', 'run', c.file, '--state', c.state], { cwd: c.dir, timeoutMs: 60_000 });
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    // Gone (or a zombie PID 1 has not reaped yet) by the time the crew ran its checks again.
    expect(canRun(orphan)).toBe(false);
    const lines = ours(resumed.stdout);
    expect(lines[0]).toMatch(/^PREGATE: lane=lane-1 status=pass /);
    expect(field(lines.at(-1)!, 'status')).toBe('complete');
  }, 180_000);
});
