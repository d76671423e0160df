import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { writeDemoCrew } from '../main/demo/demo-crew.ts';
import { BUNDLE, ensureBuilt, ERROR_LINE, ROOT } from './helpers/cli.ts';
import { readPlanEnv, writePlan } from './helpers/plan-driver.ts';
import { qaCtx, start } from './helpers/qa.ts';
import { tempRoot } from './helpers/tmp.ts';

// A state root whose files are not an LMDB environment of laneward's, or are cut short,
// is one typed line for every command that opens it, never a signal: lmdb maps the file
// and trusts it (SIGSEGV, SIGBUS), and its binding faulted on any failed open.

const root = tempRoot('store-corrupt');
const plan = join(root, 'plan.md');
const out = join(root, 'run');
const good = join(root, 'good');
let crewFile = '';

interface Ran {
  readonly status: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

function run(args: readonly string[]): Ran {
  const ran = spawnSync(process.execPath, [BUNDLE, ...args], { cwd: root, env: readPlanEnv(), encoding: 'utf8', timeout: 60_000, killSignal: 'SIGKILL' });
  return { status: ran.status, signal: ran.signal, stdout: ran.stdout, stderr: ran.stderr };
}

/** The commands that open a state root, each given the root. */
const COMMANDS: readonly (readonly [string, (state: string) => string[]])[] = [
  ['plan status', (state) => ['plan', 'status', '--out', out, '--state', state]],
  ['plan next', (state) => ['plan', 'next', '--out', join(root, `next-${createHash('sha256').update(state).digest('hex').slice(0, 8)}`), '--state', state, '--plan', plan]],
  ['crew status', (state) => ['crew', 'status', crewFile, '--state', state]],
  ['qa status', (state) => ['qa', 'status', '--lane', 'lane-1', '--state', state]],
];

let n = 0;
/** A copy of the good root with `spoil` applied to it. */
function spoiled(spoil: (dir: string) => void): string {
  const dir = join(root, `spoiled-${++n}`);
  cpSync(good, dir, { recursive: true });
  spoil(dir);
  return dir;
}

const replace = (file: string, bytes: Buffer) => (dir: string) => {
  rmSync(join(dir, file), { recursive: true, force: true });
  writeFileSync(join(dir, file), bytes);
};
const sizeOfGood = () => statSync(join(good, 'data.mdb')).size;

/** The one error line of a refused command: its code, and no signal. */
function refusal(ran: Ran): string[] {
  expect(ran.signal).toBeNull();
  const lines = ran.stderr.split('\n').filter((line) => line !== '');
  expect(lines).toHaveLength(1);
  return lines.map((line) => ERROR_LINE.exec(line)?.[1] ?? `UNRENDERED: ${line}`);
}

beforeAll(() => {
  ensureBuilt();
  writePlan(plan);
  // A root with a few runs in it, so a cut can fall inside its trees.
  for (let i = 0; i < 6; i++) expect(run(['plan', 'next', '--out', i === 0 ? out : join(root, `more-${i}`), '--state', good, '--plan', plan]).status).toBe(0);
  crewFile = writeDemoCrew({ dir: join(root, 'crew'), crew: 'corrupt', lanes: 1, broken: 0, concurrency: 1, fixtures: join(ROOT, 'fixtures'), instant: true });
}, 120_000);

describe('a state root whose files are not a laneward environment', () => {
  const cases: readonly (readonly [string, () => (dir: string) => void])[] = [
    ['a data.mdb of random bytes', () => replace('data.mdb', Buffer.from(Array.from({ length: sizeOfGood() }, (_, i) => (i * 2654435761) >>> 24)))],
    ['a data.mdb of zeros', () => replace('data.mdb', Buffer.alloc(sizeOfGood()))],
    ['a data.mdb shorter than a meta page', () => replace('data.mdb', readFileSync(join(good, 'data.mdb')).subarray(0, 100))],
    ['a data.mdb cut to one page', () => (dir) => truncateSync(join(dir, 'data.mdb'), 4096)],
    ['a data.mdb cut to three pages', () => (dir) => truncateSync(join(dir, 'data.mdb'), 3 * 4096)],
    ['a data.mdb of another data version', () => (dir) => {
      const bytes = readFileSync(join(dir, 'data.mdb'));
      bytes.writeUInt32LE(1, 28);
      writeFileSync(join(dir, 'data.mdb'), bytes);
    }],
    ['a data.mdb that is a FIFO', () => (dir) => {
      rmSync(join(dir, 'data.mdb'));
      expect(spawnSync('mkfifo', [join(dir, 'data.mdb')]).status).toBe(0);
    }],
    ['a data.mdb that is a directory', () => (dir) => {
      rmSync(join(dir, 'data.mdb'));
      mkdirSync(join(dir, 'data.mdb'));
    }],
    ['a data.mdb that is a symlink to a good one', () => (dir) => {
      rmSync(join(dir, 'data.mdb'));
      symlinkSync(join(good, 'data.mdb'), join(dir, 'data.mdb'));
    }],
    ['a lock.mdb that is a FIFO', () => (dir) => {
      rmSync(join(dir, 'lock.mdb'));
      expect(spawnSync('mkfifo', [join(dir, 'lock.mdb')]).status).toBe(0);
    }],
    ['a lock.mdb that is a directory', () => (dir) => {
      rmSync(join(dir, 'lock.mdb'));
      mkdirSync(join(dir, 'lock.mdb'));
    }],
    ['a lock.mdb that is a symlink to /dev/null', () => (dir) => {
      rmSync(join(dir, 'lock.mdb'));
      symlinkSync('/dev/null', join(dir, 'lock.mdb'));
    }],
  ];

  describe.each(COMMANDS)('%s', (_, args) => {
    test.each(cases)('on %s: STATE_CORRUPT on one line, exit 1, no signal', (_, spoil) => {
      const dir = spoiled(spoil());
      const ran = run(args(dir));
      expect(refusal(ran)).toEqual(['STATE_CORRUPT']);
      expect(ran.status).toBe(1);
      // plan next ends every run of it with its result line; nothing else is printed.
      expect(ran.stdout.split('\n').filter((line) => line !== '' && line !== 'GSTACK_RESULT: skill=autoplan status=interrupted run=-')).toEqual([]);
    });
  });

  test.each(COMMANDS)('%s on an LMDB environment of another program: STATE_CORRUPT, and its file left as it was', async (_, args) => {
    const dir = join(root, `foreign-${++n}`);
    mkdirSync(dir);
    const { open } = createRequire(import.meta.url)('lmdb') as typeof import('lmdb');
    const env = open({ path: dir });
    env.putSync('settings', 'theirs');
    const db = env.openDB({ name: 'runs' });
    db.putSync('x', 'theirs too');
    await env.close();
    const before = createHash('sha256').update(readFileSync(join(dir, 'data.mdb'))).digest('hex');
    const ran = run(args(dir));
    expect(refusal(ran)).toEqual(['STATE_CORRUPT']);
    expect(ran.status).toBe(1);
    expect(createHash('sha256').update(readFileSync(join(dir, 'data.mdb'))).digest('hex')).toBe(before);
  });

  test('plan status on a lock.mdb of garbage: lmdb sets the lock file up again, and the run is read', () => {
    const dir = spoiled(replace('lock.mdb', Buffer.alloc(8272, 0xa5)));
    const ran = run(['plan', 'status', '--out', out, '--state', dir]);
    expect(ran.signal).toBeNull();
    expect(ran.stderr).toBe('');
    expect(ran.status).toBe(0);
    expect(ran.stdout.split('\n')[0]).toMatch(/^RUN: \S+ status=awaiting_result /);
  });

  test('plan status on every cut of a real data.mdb: the run, or STATE_CORRUPT on one line, never a signal', () => {
    const size = sizeOfGood();
    const cuts = new Set<number>();
    for (let at = 4096; at < size; at += 4096) cuts.add(at).add(at + 100);
    const seen = new Map<string, number>();
    for (const cut of cuts) {
      const dir = spoiled((d) => truncateSync(join(d, 'data.mdb'), cut));
      const ran = run(['plan', 'status', '--out', out, '--state', dir]);
      expect(ran.signal, `cut at ${cut} of ${size}`).toBeNull();
      const outcome = ran.status === 0 && ran.stderr === '' ? 'read' : refusal(ran).join();
      seen.set(outcome, (seen.get(outcome) ?? 0) + 1);
      if (outcome !== 'read') expect([outcome, ran.status], `cut at ${cut} of ${size}`).toEqual(['STATE_CORRUPT', 1]);
      rmSync(dir, { recursive: true });
    }
    // A cut below the newest pages always lands in the trees.
    expect(seen.get('STATE_CORRUPT')).toBeGreaterThanOrEqual(cuts.size / 2);
  }, 180_000);

  test('plan next on a root whose data.mdb is empty (a create that stopped): a new environment, the run starts', () => {
    const dir = join(root, `empty-${++n}`);
    mkdirSync(dir);
    writeFileSync(join(dir, 'data.mdb'), '');
    const ran = run(['plan', 'next', '--out', join(root, `empty-run-${n}`), '--state', dir, '--plan', plan]);
    expect(ran.stderr).toBe('');
    expect(ran.status).toBe(0);
  });
});

/** Whether this machine lets a test mount a small tmpfs in its own namespaces. */
const canMountTmpfs = (() => {
  const probe = spawnSync('unshare', ['-rm', 'sh', '-c', 'mount -t tmpfs -o size=64k none "$1"', 'sh', tmpdir()], { encoding: 'utf8' });
  return probe.status === 0;
})();

/** Whether the lmdb build prints nothing of its own to stderr (scripts/lmdb-guard.mjs). */
const quietBuild = (() => {
  try {
    const entry = createRequire(import.meta.url).resolve('lmdb');
    let dir = dirname(entry);
    while (!existsSync(join(dir, 'binding.gyp')) && dirname(dir) !== dir) dir = dirname(dir);
    return (JSON.parse(readFileSync(join(dir, 'build/Release/laneward-guard.json'), 'utf8')) as { quiet?: unknown }).quiet === true;
  } catch {
    return false;
  }
})();

describe('a state root on a full disk', () => {
  /**
   * Runs `laneward ARGS` in its own mount namespace with a tmpfs of `sizeKiB` at `disk`, filled
   * to `freeKiB` before it starts (after `before`, laneward commands run first with room);
   * then lists the state root. The tmpfs goes with the namespace.
   */
  function onSmallDisk(disk: string, sizeKiB: number, freeKiB: number, before: readonly (readonly string[])[], args: readonly string[]): Ran & { listing: string[] } {
    mkdirSync(disk, { recursive: true });
    const node = JSON.stringify(process.execPath);
    const quote = (words: readonly string[]) => words.map((w) => `'${w.replace(/'/g, `'\\''`)}'`).join(' ');
    const script = [
      `mount -t tmpfs -o size=${sizeKiB}k none ${quote([disk])} || exit 90`,
      ...before.map((b) => `${node} ${quote([BUNDLE, ...b])} >/dev/null 2>&1 || exit 91`),
      `dd if=/dev/zero of=${quote([join(disk, 'fill')])} bs=1k count=$(( $(df -k --output=avail ${quote([disk])} | tail -1) - ${freeKiB} )) 2>/dev/null`,
      `${node} ${quote([BUNDLE, ...args])}; status=$?`,
      `echo "LISTING: $(ls -A ${quote([join(disk, 'state')])} 2>/dev/null | tr '\\n' ' ')"`,
      'exit $status',
    ].join('\n');
    const ran = spawnSync('unshare', ['-rm', 'sh', '-c', script], { cwd: root, env: readPlanEnv(), encoding: 'utf8', timeout: 120_000, killSignal: 'SIGKILL' });
    const listing = /^LISTING: (.*)$/m.exec(ran.stdout)?.[1]?.trim().split(' ').filter((name) => name !== '') ?? ['(no listing)'];
    return { status: ran.status, signal: ran.signal, stdout: ran.stdout, stderr: ran.stderr, listing };
  }

  test.skipIf(!canMountTmpfs).each([[4], [40], [200]])('plan next on a new state root with %i KiB free: STATE_UNAVAILABLE on one line, and nothing created', (freeKiB) => {
    const disk = join(root, `disk-new-${freeKiB}`);
    const ran = onSmallDisk(disk, 256, freeKiB, [], ['plan', 'next', '--out', join(root, `disk-run-${freeKiB}`), '--state', join(disk, 'state'), '--plan', plan]);
    expect(ran.status).toBe(1);
    expect(refusal(ran)).toEqual(['STATE_UNAVAILABLE']);
    expect(ran.listing).toEqual([]);
  });

  test.skipIf(!canMountTmpfs || !quietBuild)('plan next on a state root whose disk filled up: STATE_UNAVAILABLE on one line, lmdb printing nothing of its own', () => {
    const disk = join(root, 'disk-full');
    const state = join(disk, 'state');
    const big = join(root, 'big-plan.md');
    writePlan(big, `# Plan\n\n## Implementation plan\n\n${'1. A long step of the plan.\n'.repeat(4000)}\n## Review record\n\n`);
    const ran = onSmallDisk(disk, 2048, 0, [['plan', 'next', '--out', join(root, 'disk-full-1'), '--state', state, '--plan', plan]], ['plan', 'next', '--out', join(root, 'disk-full-2'), '--state', state, '--plan', big]);
    expect(ran.status).toBe(1);
    expect(refusal(ran)).toEqual(['STATE_UNAVAILABLE']);
    expect(ran.listing).toEqual(['data.mdb', 'lock.mdb']);
  });
});

/** Whether this machine lets a test mount a directory read-only in its own namespaces. */
const canMountReadOnly = (() => {
  const probe = spawnSync('unshare', ['-rm', 'sh', '-c', 'mount --bind /tmp /tmp && mount -o remount,bind,ro /tmp'], { encoding: 'utf8' });
  return probe.status === 0;
})();

describe('qa status reads only', () => {
  test.skipIf(!canMountReadOnly)('qa status on a state root on a read-only file system: its QA_STATUS line, exit 0', () => {
    const ctx = qaCtx(join(root, 'qa-ro'));
    expect(start(ctx, 'ro-1', 'pass').code).toBe(0);
    const script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"';
    const ran = spawnSync('unshare', ['-rm', 'sh', '-c', script, 'sh', ctx.state, process.execPath, BUNDLE, 'qa', 'status', '--lane', 'ro-1', '--state', ctx.state], {
      encoding: 'utf8',
      cwd: ctx.root,
      env: readPlanEnv(),
      timeout: 60_000,
      killSignal: 'SIGKILL',
    });
    expect(ran.stderr).toBe('');
    expect(ran.status).toBe(0);
    expect(ran.stdout.split('\n')[0]).toMatch(/^QA_STATUS: lane=ro-1 state=active ready=yes /);
  });

  test('qa status on a state root that does not exist: QA_NO_OBSERVER (exit 3), and nothing is created', () => {
    const state = join(root, 'qa-none', 'state');
    const ran = run(['qa', 'status', '--lane', 'none-1', '--state', state]);
    expect(refusal(ran)).toEqual(['QA_NO_OBSERVER']);
    expect(ran.status).toBe(3);
    expect(existsSync(join(root, 'qa-none'))).toBe(false);
  });
});

describe('records of another shape or version', () => {
  /** A copy of the good root where `db`'s record `key` is replaced by `value`. */
  async function withRecord(db: 'runs' | 'lanes' | 'crew-lanes', key: string | [string, string], value: unknown): Promise<string> {
    const dir = spoiled(() => undefined);
    const { open } = createRequire(import.meta.url)('lmdb') as typeof import('lmdb');
    const { Encoder } = createRequire(import.meta.url)('cbor-x') as typeof import('cbor-x');
    const env = open({ path: dir, maxDbs: 16 });
    const target = env.openDB({ name: db, encoder: { Encoder } } as { name: string });
    await target.put(key, value);
    await env.close();
    return dir;
  }
  const runId = () => readFileSync(join(out, '.laneward-run'), 'utf8').split(/\s+/)[0]!;

  test.each([
    ['of a later version', (record: Record<string, unknown>) => ({ ...record, v: 2 })],
    ['whose sequence is text', (record: Record<string, unknown>) => ({ ...record, seq: 'seven' })],
    ['that is a string', () => 'not a record'],
    ['that is a list', () => [1, 2, 3]],
  ])('plan status on a run record %s: STATE_RECORD_INVALID on one line, exit 1', async (_, shape) => {
    const { open } = createRequire(import.meta.url)('lmdb') as typeof import('lmdb');
    const { Encoder } = createRequire(import.meta.url)('cbor-x') as typeof import('cbor-x');
    const env = open({ path: good, maxDbs: 16, readOnly: true });
    const record = env.openDB({ name: 'runs', encoder: { Encoder } } as { name: string }).get(runId()) as Record<string, unknown>;
    await env.close();
    expect(record.v).toBe(1);
    const dir = await withRecord('runs', runId(), shape(record));
    const ran = run(['plan', 'status', '--out', out, '--state', dir]);
    expect(refusal(ran)).toEqual(['STATE_RECORD_INVALID']);
    expect(ran.status).toBe(1);
  });

  test('qa status on a lane record of a later version: STATE_RECORD_INVALID on one line, exit 1', async () => {
    const dir = await withRecord('lanes', 'lane-1', { version: 2, lane: 'lane-1' });
    const ran = run(['qa', 'status', '--lane', 'lane-1', '--state', dir]);
    expect(refusal(ran)).toEqual(['STATE_RECORD_INVALID']);
    expect(ran.status).toBe(1);
  });

  test('crew status on a crew lane record of another shape: STATE_RECORD_INVALID on one line, exit 1', async () => {
    const dir = await withRecord('crew-lanes', ['corrupt', 'lane-1'], { crew: 'corrupt', lane: 'lane-1', stage: 'somewhere' });
    const ran = run(['crew', 'status', crewFile, '--state', dir]);
    expect(refusal(ran)).toEqual(['STATE_RECORD_INVALID']);
    expect(ran.status).toBe(1);
  });
});
