import { spawn } from 'node:child_process';
import { landLane } from '../main/land/land-lane.ts';
import { validateFile } from '../workers/validate/validate-file.ts';
import type { CarryEvent } from '../formats/crew/land-train.ts';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { writeDemoCrew } from '../main/demo/demo-crew.ts';
import { carryLine, landLine, landOrder, landSummaryLine, trainCode, type LaneLanded } from '../formats/crew/land-train.ts';
import { BUNDLE, codesOf, ensureBuilt, laneward } from './helpers/cli.ts';
import { canRun, exitOf, killQuietly, killStrays, until } from './helpers/procs.ts';
import { baseRepo, git } from './helpers/git.ts';
import { tempRoot } from './helpers/tmp.ts';

// crew land, the controller's merge train: the crew's complete lanes onto the moving base,
// one fast-forward each, their receipts carried while the product diff is unchanged.

const root = tempRoot('crew-land');
const fixtures = join(import.meta.dirname, '..', 'fixtures');

beforeAll(() => ensureBuilt());
/** The check the test parks for its SIGKILL (`sleep`, whose command line names no temp path): killed here should the test fail before the train sweeps it. */
let parkedPid: number | null = null;
afterEach(() => {
  if (parkedPid !== null) killQuietly(parkedPid);
  parkedPid = null;
  expect(killStrays(root)).toEqual([]);
});

const landed = (lane: string, over: Partial<LaneLanded> = {}): LaneLanded => ({ lane, status: 'landed', from: 'a'.repeat(40), to: 'b'.repeat(40), code: null, already: false, branch: `laneward/c/r/${lane}`, ...over });

describe('land lines and order', () => {
  test('should render the LAND, CARRY and LAND_SUMMARY lines the help names', () => {
    expect(landLine(landed('l1'))).toBe('LAND: lane=l1 status=landed from=aaaaaaaaaaaa to=bbbbbbbbbbbb');
    expect(landLine(landed('l2', { status: 'conflict', to: null, code: 'LAND_CONFLICT' }))).toBe('LAND: lane=l2 status=conflict from=aaaaaaaaaaaa to=- code=LAND_CONFLICT');
    expect(carryLine({ kind: 'carry', lane: 'l1', status: 'carried', from: 'a'.repeat(40), to: 'b'.repeat(40), reason: 'why' })).toBe('CARRY: carried from aaaaaaaaaaaa to bbbbbbbbbbbb (why)');
    expect(carryLine({ kind: 'carry', lane: 'l1', status: 'refused', code: 'RECEIPT_CARRY_PRODUCT_CHANGED' })).toBe('CARRY: refused (RECEIPT_CARRY_PRODUCT_CHANGED)');
    expect(landSummaryLine({ lanes: 3, landed: 1, conflict: 1, refused: 1, check_failed: 0, base: 'c'.repeat(40) })).toBe('LAND_SUMMARY: lanes=3 landed=1 conflict=1 refused=1 check_failed=0 base=cccccccccccc');
  });

  test.each([
    ['every lane landed', [landed('a')], null],
    ['a refusal only', [landed('a'), landed('b', { status: 'refused', code: 'QUEUE_RECEIPT_STALE' })], 'QUEUE_RECEIPT_STALE'],
    ['a conflict outranks an earlier refusal', [landed('a', { status: 'refused', code: 'LAND_NOT_READY' }), landed('b', { status: 'conflict', code: 'LAND_CONFLICT' })], 'LAND_CONFLICT'],
    ['a rejected lease outranks a refusal', [landed('a', { status: 'refused', code: 'RECEIPT_CARRY_PRODUCT_CHANGED' }), landed('b', { status: 'refused', code: 'LAND_LEASE_REJECTED' })], 'LAND_LEASE_REJECTED'],
  ] as const)('should read the exit code from the lanes: %s', (_, lanes, code) => {
    expect(trainCode(lanes)).toBe(code);
  });

  test('should take a lane after the lanes its tasks depend on (lane id, task id or pr label), else file order, and keep a cycle in file order', () => {
    const none = { ids: [], prs: [], dependsOn: [] };
    expect(
      landOrder([
        { lane: 'a', ...none, ids: ['a-t1'], dependsOn: ['c'] },
        { lane: 'b', ...none, ids: ['b-t1', 'b-t2'], dependsOn: ['b-t1'] },
        { lane: 'c', ...none, prs: ['pr-9'], dependsOn: ['d-t1'] },
        { lane: 'd', ...none, ids: ['d-t1'] },
      ]).order,
    ).toEqual(['b', 'd', 'c', 'a']);
    const cycle = landOrder([
      { lane: 'x', ...none, dependsOn: ['y'] },
      { lane: 'y', ...none, dependsOn: ['x'] },
    ]);
    expect(cycle.order).toEqual(['x', 'y']);
    expect(cycle.deps.get('x')).toEqual(['y']);
  });
});

/** Twenty numbered lines: the lanes of a pair edit lines of one such file. */
const twenty = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

/**
 * Each lane edits one line of its pair's file and adds own-<lane>.txt: lanes 1 and 2 far
 * apart (both carry), 3 and 4 the same line (4 conflicts), 5 and 6 three lines apart (6
 * applies cleanly but its hunk's context changed: its product diff is not the reviewed
 * one), 7 and 8 far apart, each with a flag the check refuses together.
 */
const EDITS: Record<string, [string, number, string?]> = {
  'lane-1': ['p1.txt', 3],
  'lane-2': ['p1.txt', 15],
  'lane-3': ['p2.txt', 5],
  'lane-4': ['p2.txt', 5],
  'lane-5': ['p3.txt', 5],
  'lane-6': ['p3.txt', 8],
  'lane-7': ['p4.txt', 3, 'flag-7'],
  'lane-8': ['p4.txt', 15, 'flag-8'],
};

describe('crew land, a merge train on a real repository with a bare remote', () => {
  test('should land every lane or type it, carry receipts, keep the base a fast-forward chain through a SIGKILL, and push exactly what the lines say', async () => {
    const r = baseRepo(join(root, 'repo'));
    for (const f of ['p1.txt', 'p2.txt', 'p3.txt', 'p4.txt']) writeFileSync(join(r.dir, f), twenty);
    git(r.dir, 'add', '.');
    git(r.dir, 'commit', '-qm', 'pairs');
    const remote = join(root, 'remote.git');
    git(root, 'clone', '-q', '--bare', r.dir, remote);
    const triggers = join(root, 'triggers');
    mkdirSync(triggers);

    const agent = join(root, 'agent.sh');
    const cases = Object.entries(EDITS)
      .map(([lane, [file, line, flag]]) => `  ${lane}) sed -i '${line}s/.*/${lane}/' ${file}${flag === undefined ? '' : `; echo f > ${flag}`} ;;`)
      .join('\n');
    writeFileSync(agent, `#!/bin/sh\n{ printf '\\001' >&3; } 2>/dev/null\nlane=$(basename "$(dirname "$PWD")")\ncase "$lane" in\n${cases}\nesac\necho x > "own-$lane.txt"\nprintf '{"text":"edited","diff":true,"finish":true}' > "$2"\n`);
    chmodSync(agent, 0o755);
    // The repository's check. It refuses flag-7 and flag-8 together (only a merged tree has
    // both); armed by the test after the crew ran, it also moves the base while lane 1 is
    // checked, pushes to lane 2's branch on the remote while lane 2 is checked (a race the
    // lease must catch), and parks in lane 5's check for the test's SIGKILL.
    const check = join(root, 'check.sh');
    const g = `git -c user.name=t -c user.email=t@example.com -C '${r.dir}'`;
    writeFileSync(
      check,
      [
        '#!/bin/sh',
        `T='${triggers}'`,
        `if [ -e own-lane-1.txt ] && [ -e "$T/move-base" ]; then rm -f "$T/move-base"; c=$(${g} commit-tree -p refs/heads/main -m 'outside, during the train' 'refs/heads/main^{tree}') && ${g} update-ref refs/heads/main "$c" && echo "$c" > "$T/moved" || exit 9; fi`,
        `if [ -e own-lane-2.txt ] && [ -e "$T/race" ]; then rm -f "$T/race"; b=$(${g} for-each-ref --format='%(refname)' 'refs/heads/laneward/*/*/lane-2'); ${g} push -q '${remote}' "refs/heads/main:$b" || exit 9; fi`,
        `if [ -e own-lane-5.txt ] && [ -e "$T/kill" ]; then rm -f "$T/kill"; echo $$ > "$T/parked"; exec sleep 60; fi`,
        `if [ -e flag-7 ] && [ -e flag-8 ]; then echo 'flag-7 and flag-8 together' >&2; exit 3; fi`,
        'exit 0',
        '',
      ].join('\n'),
    );
    chmodSync(check, 0o755);

    const dir = join(root, 'crew');
    const file = writeDemoCrew({ dir, crew: 'train', lanes: 8, broken: 0, concurrency: 4, fixtures, instant: true });
    const value = JSON.parse(readFileSync(file, 'utf8'));
    value.workspace = { repo: r.dir, base: 'main' };
    value.runners.agent = [agent, '{prompt}', '{result}'];
    value.pregate = [{ id: 'flags', argv: [check] }];
    writeFileSync(file, JSON.stringify(value));
    const state = join(dir, 'state');
    const ran = laneward(['crew', 'run', file, '--state', state], { cwd: dir, timeoutMs: 240_000 });
    expect(ran.code, ran.stdout + ran.stderr).toBe(0);
    // The plans overlap in pairs: each lane's changed files against the others'.
    expect(ran.stdout.split('\n').filter((l) => l.startsWith('LANE_CHECK: ')).map((l) => /with=(\S+)/.exec(l)?.[1])).toEqual(['lane-2', 'lane-1', 'lane-4', 'lane-3', 'lane-6', 'lane-5', 'lane-8', 'lane-7']);
    const branchOf = (lane: string) => git(r.dir, 'for-each-ref', '--format=%(refname:short)', `refs/heads/laneward/train/*/${lane}`);
    const lanes = Object.keys(EDITS);
    const heads = Object.fromEntries(lanes.map((l) => [l, git(r.dir, 'rev-parse', branchOf(l))]));
    const receiptOf = (lane: string) => JSON.parse(readFileSync(join(dir, 'runs', lane, 'ship-run.json'), 'utf8')) as Record<string, unknown>;
    expect(lanes.map((l) => receiptOf(l).head)).toEqual(lanes.map((l) => heads[l]));

    // A live holder of the crew's out (a crew run, another train) refuses the train.
    const { claimOut } = await import('../main/crew/out-claim.ts');
    const releaseOut = claimOut(join(dir, 'runs'), 'train', file);
    const busy = laneward(['crew', 'land', file, '--state', state], { cwd: dir });
    releaseOut();
    expect([busy.code, busy.stdout, codesOf(busy.stderr)]).toEqual([3, '', ['CREW_BUSY']]);
    // The base is checked out (main in the repository's own worktree): nothing moves.
    const held = laneward(['crew', 'land', file, '--state', state], { cwd: dir });
    expect([held.code, held.stdout, codesOf(held.stderr)]).toEqual([3, '', ['LAND_CHECKED_OUT']]);
    expect(lanes.map((l) => git(r.dir, 'rev-parse', branchOf(l)))).toEqual(lanes.map((l) => heads[l]));
    git(r.dir, 'checkout', '-q', '--detach');

    // The base moves after the lanes started, and again during the train.
    writeFileSync(join(r.dir, 'outside.txt'), 'o\n');
    git(r.dir, 'add', 'outside.txt');
    git(r.dir, 'commit', '-qm', 'outside, before the train');
    git(r.dir, 'update-ref', 'refs/heads/main', 'HEAD');
    const before = git(r.dir, 'rev-parse', 'HEAD');
    for (const t of ['move-base', 'race', 'kill']) writeFileSync(join(triggers, t), '');

    // First train: killed (SIGKILL) while lane 5's check runs.
    const child = spawn(process.execPath, [BUNDLE, 'crew', 'land', file, '--state', state, '--push', remote], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let first = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (first += s));
    const exited = exitOf(child).then(() => undefined);
    await until(() => existsSync(join(triggers, 'parked')), 120_000, 'lane 5\'s check to park');
    child.kill('SIGKILL');
    await exited;
    const parked = Number(readFileSync(join(triggers, 'parked'), 'utf8'));
    parkedPid = parked;
    const moved = readFileSync(join(triggers, 'moved'), 'utf8').trim();
    const firstLines = first.split('\n').filter((l) => /^(LAND|CARRY): /.test(l));
    const to = (lines: string[], lane: string) => lines.find((l) => l.startsWith(`LAND: lane=${lane} `))?.match(/ to=(\S+)/)?.[1] ?? '?';
    const at = (lane: string) => git(r.dir, 'rev-parse', branchOf(lane));
    const s12 = (sha: string) => sha.slice(0, 12);
    const firstTo1 = at('lane-1');
    expect(firstLines).toEqual([
      // Lane 1 is carried onto the base, then again onto the commit the base moved to while it was checked.
      expect.stringMatching(new RegExp(`^CARRY: carried from ${s12(heads['lane-1']!)} to [0-9a-f]{12} \\(rebase onto main at ${s12(before)}, patch id unchanged\\)$`)),
      expect.stringMatching(new RegExp(`^CARRY: carried from [0-9a-f]{12} to ${s12(firstTo1)} \\(rebase onto main at ${s12(moved)}, patch id unchanged\\)$`)),
      `LAND: lane=lane-1 status=landed from=${s12(heads['lane-1']!)} to=${s12(firstTo1)}`,
      `LAND: lane=lane-2 status=refused from=${s12(heads['lane-2']!)} to=- code=LAND_LEASE_REJECTED`,
      expect.stringMatching(/^CARRY: carried from /),
      `LAND: lane=lane-3 status=landed from=${s12(heads['lane-3']!)} to=${s12(at('lane-3'))}`,
      `LAND: lane=lane-4 status=conflict from=${s12(heads['lane-4']!)} to=- code=LAND_CONFLICT`,
    ]);
    // Killed mid-train, the base is at a lane boundary: lane 3's tip.
    expect(git(r.dir, 'rev-parse', 'refs/heads/main')).toBe(at('lane-3'));

    // The same command goes on: what landed is not landed again; the check the kill left is torn down first.
    const second = laneward(['crew', 'land', file, '--state', state, '--push', remote], { cwd: dir, timeoutMs: 120_000 });
    expect(canRun(parked)).toBe(false);
    // Gone: its pid may name another process from now on.
    parkedPid = null;
    const lines = second.stdout.split('\n').filter((l) => /^(LAND|CARRY|LAND_SUMMARY): /.test(l));
    const base = git(r.dir, 'rev-parse', 'refs/heads/main');
    expect(lines).toEqual([
      `LAND: lane=lane-1 status=landed from=${s12(heads['lane-1']!)} to=${s12(firstTo1)}`,
      expect.stringMatching(new RegExp(`^CARRY: carried from ${s12(heads['lane-2']!)} to ${s12(at('lane-2'))} \\(rebase onto main at ${s12(at('lane-3'))}, patch id unchanged\\)$`)),
      `LAND: lane=lane-2 status=landed from=${s12(heads['lane-2']!)} to=${s12(at('lane-2'))}`,
      `LAND: lane=lane-3 status=landed from=${s12(heads['lane-3']!)} to=${s12(at('lane-3'))}`,
      `LAND: lane=lane-4 status=conflict from=${s12(heads['lane-4']!)} to=- code=LAND_CONFLICT`,
      expect.stringMatching(/^CARRY: carried from /),
      `LAND: lane=lane-5 status=landed from=${s12(heads['lane-5']!)} to=${s12(at('lane-5'))}`,
      'CARRY: refused (RECEIPT_CARRY_PRODUCT_CHANGED)',
      `LAND: lane=lane-6 status=refused from=${s12(heads['lane-6']!)} to=- code=RECEIPT_CARRY_PRODUCT_CHANGED`,
      expect.stringMatching(/^CARRY: carried from /),
      `LAND: lane=lane-7 status=landed from=${s12(heads['lane-7']!)} to=${s12(at('lane-7'))}`,
      `LAND: lane=lane-8 status=check_failed from=${s12(heads['lane-8']!)} to=- code=LAND_CHECK_FAILED`,
      `LAND_SUMMARY: lanes=8 landed=5 conflict=1 refused=1 check_failed=1 base=${s12(base)}`,
    ]);
    expect(second.code).toBe(1);
    expect(codesOf(second.stderr)).toEqual(['LAND_CONFLICT', 'RECEIPT_CARRY_PRODUCT_CHANGED', 'LAND_CHECK_FAILED']);

    // The base: a fast-forward chain of the two outside commits and the landed lanes, in landing order.
    const landedOrder = ['lane-1', 'lane-3', 'lane-2', 'lane-5', 'lane-7'];
    expect(git(r.dir, 'rev-list', '--reverse', '--first-parent', `${r.base}..refs/heads/main`).split('\n').slice(1)).toEqual([before, moved, ...landedOrder.map(at)]);
    expect(git(r.dir, 'rev-list', '--merges', `${r.base}..refs/heads/main`), git(r.dir, 'log', '--format=%H %P %s', 'refs/heads/main')).toBe('');
    expect(to(lines, 'lane-7')).toBe(s12(base));
    // Every receipt validates and names its branch's tip: carried for the landed lanes, untouched for the others.
    for (const lane of lanes) {
      const receipt = receiptOf(lane);
      expect(receipt.head, lane).toBe(at(lane));
      // The validator `artifact validate --as ship-receipt` runs, in this process (the CLI once, below).
      expect(validateFile(join(dir, 'runs', lane, 'ship-run.json'), 'ship-receipt', undefined), lane).toMatchObject({ valid: true, errors: [] });
      if (landedOrder.includes(lane)) {
        expect(receipt, lane).toMatchObject({ carry_reason: expect.stringMatching(/^rebase onto main at [0-9a-f]{12}, patch id unchanged$/), carry: { to: at(lane), mode: 'rebase', range_diff: expect.stringContaining('=') } });
        expect(git(r.dir, 'rev-parse', `${at(lane)}^{tree}`)).toBe(receipt.gated_tree);
      } else {
        expect(receipt.head, lane).toBe(heads[lane]);
        expect(receipt.carried_from, lane).toBeUndefined();
      }
    }
    const cli = laneward(['artifact', 'validate', join(dir, 'runs', 'lane-1', 'ship-run.json'), '--as', 'ship-receipt']);
    expect([cli.code, cli.stdout.trim()]).toEqual([0, 'ARTIFACT_VALID: schema=ship-receipt rows=1']);
    expect(JSON.parse(readFileSync(join(dir, 'runs', 'lane-8', 'land', 'pregate.json'), 'utf8')).checks).toMatchObject([{ id: 'flags', status: 'fail', exit_code: 3 }]);
    // Each lane's outcome is recorded in its run directory, and no scratch worktree is left.
    expect(JSON.parse(readFileSync(join(dir, 'runs', 'lane-4', 'land', 'land.json'), 'utf8'))).toMatchObject({ lane: 'lane-4', status: 'conflict', code: 'LAND_CONFLICT', from: heads['lane-4'], to: null, base: 'main' });
    expect(readdirSync(join(dir, 'runs', '.land'))).toEqual([]);
    expect(git(r.dir, 'worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree '))).toEqual([`worktree ${r.dir}`]);
    // The remote holds exactly what the lines say: the base, and each landed lane's branch at its tip.
    const remoteRefs = git(remote, 'for-each-ref', '--format=%(refname) %(objectname)').split('\n').sort();
    expect(remoteRefs).toEqual([`refs/heads/main ${base}`, ...landedOrder.map((l) => `refs/heads/${branchOf(l)} ${at(l)}`)].sort());

    // The console's snapshot (crew status --json, /snapshot.json) shows the train: each lane's last outcome.
    const snapshot = laneward(['crew', 'status', file, '--state', state, '--json'], { cwd: dir });
    const shown = (JSON.parse(snapshot.stdout) as { lanes: { id: string; land?: { status: string; code: string | null; to: string | null } }[] }).lanes;
    expect(shown.map((l) => [l.id, l.land?.status, l.land?.code, l.land?.to])).toEqual(
      lanes.map((l) => [l, ...(landedOrder.includes(l) ? ['landed', null, at(l)] : l === 'lane-4' ? ['conflict', 'LAND_CONFLICT', null] : l === 'lane-6' ? ['refused', 'RECEIPT_CARRY_PRODUCT_CHANGED', null] : ['check_failed', 'LAND_CHECK_FAILED', null])]),
    );
    // A train killed after it wrote lane 7's carried receipt, before it moved the branch
    // and the base: the same command moves the branch to the receipt's head and lands it.
    const lane7 = at('lane-7');
    git(r.dir, 'update-ref', `refs/heads/${branchOf('lane-7')}`, heads['lane-7']!);
    git(r.dir, 'update-ref', 'refs/heads/main', at('lane-5'));
    // And the remote's base moved on by itself: the train's fast-forward push of the base is refused.
    const diverged = git(remote, 'commit-tree', '-p', lane7, '-m', 'pushed by someone else', `${lane7}^{tree}`);
    git(remote, 'update-ref', 'refs/heads/main', diverged);
    // And lane 4's branch is checked out in a worktree of its own: that lane is refused, before anything is tried.
    git(r.dir, 'worktree', 'add', '-q', join(root, 'hold'), branchOf('lane-4'));
    const third = laneward(['crew', 'land', file, '--state', state, '--push', remote, '--json'], { cwd: dir, timeoutMs: 120_000 });
    const objects = third.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(objects.filter((o) => o.lane === 'lane-7')).toEqual([
      { kind: 'carry', lane: 'lane-7', status: 'current', head: lane7 },
      { kind: 'land', lane: 'lane-7', status: 'landed', from: heads['lane-7'], to: lane7, code: null, already: false, branch: branchOf('lane-7') },
    ]);
    expect(objects.filter((o) => o.kind === 'land' && o.already === true).map((o) => o.lane)).toEqual(['lane-1', 'lane-2', 'lane-3', 'lane-5']);
    expect(objects.find((o) => o.lane === 'lane-4')).toMatchObject({ kind: 'land', status: 'refused', code: 'LAND_CHECKED_OUT', from: heads['lane-4'], to: null });
    expect(objects.at(-1)).toEqual({ summary: { lanes: 8, landed: 5, conflict: 0, refused: 2, check_failed: 1, base: lane7, branch: 'main' } });
    expect(git(r.dir, 'rev-parse', 'refs/heads/main')).toBe(lane7);
    expect(third.code).toBe(1);
    expect(codesOf(third.stderr)).toEqual(['LAND_CHECKED_OUT', 'RECEIPT_CARRY_PRODUCT_CHANGED', 'LAND_CHECK_FAILED', 'LAND_PUSH_REJECTED']);
    expect(git(remote, 'rev-parse', 'refs/heads/main')).toBe(diverged);
    git(r.dir, 'worktree', 'remove', join(root, 'hold'));
  }, 300_000);
});

describe('one lane onto the base, merge mode', () => {
  test('should fast-forward a lane on the tip, make a merge commit for one behind it with its receipt carried, and refuse a changed diff and a conflict with nothing moved', async () => {
    const r = baseRepo(join(root, 'merge-repo'));
    writeFileSync(join(r.dir, 'p.txt'), twenty);
    git(r.dir, 'add', '.');
    git(r.dir, 'commit', '-qm', 'p');
    const b0 = git(r.dir, 'rev-parse', 'HEAD');
    git(r.dir, 'checkout', '-q', '--detach');
    const out = join(root, 'merge-out');
    const lanes = { a: 3, b: 15, c: 6, d: 15 };
    const heads: Record<string, string> = {};
    for (const [lane, line] of Object.entries(lanes)) {
      git(r.dir, 'checkout', '-q', '-b', `l/${lane}`, b0);
      writeFileSync(join(r.dir, 'p.txt'), twenty.replace(`line ${line}\n`, `${lane}\n`));
      git(r.dir, 'commit', '-qam', lane);
      heads[lane] = git(r.dir, 'rev-parse', 'HEAD');
      mkdirSync(join(out, lane), { recursive: true });
      writeFileSync(join(out, lane, 'ship-run.json'), JSON.stringify({ schema_version: 1, head: heads[lane], base: b0, repo: r.dir, branch: `l/${lane}` }));
    }
    git(r.dir, 'checkout', '-q', '--detach');
    const carries: CarryEvent[] = [];
    const ctx = { crew: 'm', repo: r.dir, out, base: 'main', mode: 'merge' as const, checks: [], push: null, cancel: new AbortController().signal, onCarry: (c: CarryEvent) => carries.push(c) };
    const land = (lane: string) => landLane(ctx, { lane, branch: `l/${lane}`, runDir: join(out, lane) });
    const ends = [];
    for (const lane of Object.keys(lanes)) ends.push(await land(lane));
    const main = git(r.dir, 'rev-parse', 'main');
    expect(ends.map((e) => [e.lane, e.status, e.code, e.to])).toEqual([
      ['a', 'landed', null, heads['a']],
      ['b', 'landed', null, main],
      ['c', 'refused', 'RECEIPT_CARRY_PRODUCT_CHANGED', null],
      ['d', 'conflict', 'LAND_CONFLICT', null],
    ]);
    expect(git(r.dir, 'rev-list', '--parents', '-n', '1', main).split(' ')).toEqual([main, heads['a'], heads['b']]);
    expect(carries.map((c) => c.status)).toEqual(['current', 'carried', 'refused']);
    const receiptB = JSON.parse(readFileSync(join(out, 'b', 'ship-run.json'), 'utf8'));
    expect(receiptB).toMatchObject({ head: main, base: heads['a'], carried_from: heads['b'], carry: { mode: 'merge', from: heads['b'], to: main, onto: heads['a'] } });
    expect(receiptB.gated_tree).toBeUndefined();
    // Refused and conflicting lanes: branch, receipt and base as they were; no scratch worktree left.
    for (const lane of ['c', 'd']) {
      expect(git(r.dir, 'rev-parse', `l/${lane}`)).toBe(heads[lane]);
      expect(JSON.parse(readFileSync(join(out, lane, 'ship-run.json'), 'utf8')).head).toBe(heads[lane]);
    }
    expect(git(r.dir, 'rev-parse', 'l/b')).toBe(main);
    expect(readdirSync(join(out, '.land'))).toEqual([]);
    // A branch moved past its receipt is stale; a lane with no receipt is not ready; neither moves anything.
    git(r.dir, 'update-ref', 'refs/heads/l/c', git(r.dir, 'commit-tree', '-p', heads['c']!, '-m', 'after the receipt', `${heads['c']}^{tree}`));
    mkdirSync(join(out, 'none'));
    expect([(await land('c')).code, (await landLane(ctx, { lane: 'none', branch: 'l/d', runDir: join(out, 'none') })).code]).toEqual(['QUEUE_RECEIPT_STALE', 'LAND_NOT_READY']);
    expect(git(r.dir, 'rev-parse', 'main')).toBe(main);
    expect(git(r.dir, 'worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree '))).toEqual([`worktree ${r.dir}`]);
  }, 60_000);
});
