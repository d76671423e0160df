import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync, renameSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { generateRun, readManifest, writeManifest } from '../fixtures/generate-run.ts';
import { BUNDLE, codesOf, ensureBuilt, laneward, ROOT } from './helpers/cli.ts';
import { waitingOn } from './helpers/lock-watch.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('ack');
beforeAll(ensureBuilt);

function run(name: string, edit?: (dir: string) => void): string {
  const dir = join(root, name);
  generateRun(dir);
  edit?.(dir);
  return dir;
}

type Acked = Promise<{ code: number | null; stdout: string; stderr: string }> & { pid: number };

function ackAsync(dir: string, consumer: string): Acked {
  const child = spawn(process.execPath, [BUNDLE, 'artifact', 'ack', dir, '--consumer', consumer], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const done = new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return Object.assign(done, { pid: child.pid! }) as Acked;
}

/** A pid that is certainly not running: a child that has exited and been reaped. */
function deadPid(): number {
  return spawnSync('true').pid!;
}

/** What ack may leave beside run.json: nothing but the files that were there. */
function leftovers(dir: string): string[] {
  return readdirSync(dir).filter((name) => name.includes('.lock') || name.endsWith('.tmp'));
}

describe('laneward artifact ack: stale locks (10)', () => {
  let sleeper: ReturnType<typeof spawn> | undefined;

  test.each([
    ['a regular file naming a dead pid', (lock: string) => writeFileSync(lock, String(deadPid()))],
    ['an empty file', (lock: string) => writeFileSync(lock, '')],
    ['garbage', (lock: string) => writeFileSync(lock, 'not a pid\n')],
    [
      'a regular file naming a pid reused by a later process',
      (lock: string) => {
        sleeper = spawn('sleep', ['60'], { stdio: 'ignore' });
        writeFileSync(lock, String(sleeper.pid));
        const hourAgo = Date.now() / 1000 - 3600;
        utimesSync(lock, hourAgo, hourAgo);
      },
    ],
    ['a token of a dead process', (lock: string) => symlinkSync(`${deadPid()}:123:abcdef`, lock)],
    ['a token whose pid now names another process', (lock: string) => symlinkSync(`${process.pid}:1:abcdef`, lock)],
  ])('should take over %s: 20 concurrent acks all land, none waits on it', async (name, makeLock) => {
    const dir = run(`stale-${name.replaceAll(/\W+/g, '-')}`);
    makeLock(join(dir, 'run.json.lock'));
    try {
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => ackAsync(dir, `consumer-${i}`)));
      for (const result of results) {
        expect(result.stderr).toBe('');
        expect(result.code).toBe(0);
      }
      const consumers = (readManifest(dir)['consumed_by'] as { consumer: string }[]).map((entry) => entry.consumer).sort();
      expect(consumers).toEqual(Array.from({ length: 20 }, (_, i) => `consumer-${i}`).sort());
      expect(leftovers(dir)).toEqual([]);
      expect(laneward(['artifact', 'validate', dir]).code).toBe(0);
    } finally {
      sleeper?.kill('SIGKILL');
      sleeper = undefined;
    }
  }, 60_000);

  test('should wait for a live holder and then record its consumer', async () => {
    const dir = run('live-holder');
    const lock = join(dir, 'run.json.lock');
    writeFileSync(lock, String(process.pid));
    const pending = ackAsync(dir, 'after-holder');
    await waitingOn(lock, 'the ack');
    expect(readManifest(dir)['consumed_by']).toEqual([]);
    unlinkSync(lock);
    expect((await pending).code).toBe(0);
    expect(readManifest(dir)['consumed_by']).toMatchObject([{ consumer: 'after-holder' }]);
  }, 30_000);
});

describe('laneward artifact ack: validates what it rewrites (11)', () => {
  test('should refuse a manifest swapped for an invalid one while it waited for the lock', async () => {
    const dir = run('swapped');
    const lock = join(dir, 'run.json.lock');
    writeFileSync(lock, String(process.pid));
    const pending = ackAsync(dir, 'late');
    // By now an ack that validated before taking the lock has judged the old manifest.
    await waitingOn(lock, 'the ack');
    const manifest = readManifest(dir);
    manifest['artifacts']['plan.md'].sha256 = '0'.repeat(64);
    writeManifest(dir, manifest);
    const swapped = readFileSync(join(dir, 'run.json'));
    unlinkSync(lock);
    const result = await pending;
    expect(result.code).toBe(3);
    expect(codesOf(result.stderr)).toEqual(['ARTIFACT_STALE', 'ACK_REFUSED']);
    expect(readFileSync(join(dir, 'run.json'))).toEqual(swapped);
  }, 30_000);
});

describe('laneward artifact ack: changes consumed_by and nothing else (12)', () => {
  const at = (stdout: string) => JSON.parse(stdout).at as string;

  test('should keep unknown fields byte for byte in a compact manifest', () => {
    const dir = run('compact', (d) => {
      const parsed = readManifest(d);
      delete parsed['consumed_by'];
      const manifest = JSON.stringify(parsed);
      writeFileSync(join(d, 'run.json'), `${manifest.slice(0, -1)},"huge":1e400,"digits":12345678901234567891,"neg":-0.0e-0}`);
    });
    const before = readFileSync(join(dir, 'run.json'), 'utf8');
    const result = laneward(['artifact', 'ack', dir, '--consumer', 'q', '--json']);
    expect(result.code).toBe(0);
    const after = readFileSync(join(dir, 'run.json'), 'utf8');
    expect(after).toBe(`${before.slice(0, -1)},"consumed_by":[{"consumer":"q","at":"${at(result.stdout)}"}]}`);
  });

  test('should append to an existing consumed_by in the formatting of the file', () => {
    const dir = run('pretty', (d) => {
      const manifest = readManifest(d);
      manifest['consumed_by'] = [{ consumer: 'first', at: '2026-01-01T00:00:00.000Z' }];
      writeManifest(d, manifest);
    });
    const before = readFileSync(join(dir, 'run.json'), 'utf8');
    const result = laneward(['artifact', 'ack', dir, '--consumer', 'second', '--json']);
    expect(result.code).toBe(0);
    const anchor = '"at": "2026-01-01T00:00:00.000Z"\n    }';
    expect(readFileSync(join(dir, 'run.json'), 'utf8')).toBe(
      before.replace(anchor, `${anchor},\n    {"consumer": "second", "at": "${at(result.stdout)}"}`),
    );
  });

  test('should keep a compact 7.6 MiB manifest compact and valid', () => {
    const dir = run('big-compact', (d) => {
      const manifest = JSON.stringify(readManifest(d));
      const pad = new Array(4_000_000).fill('0').join(',');
      writeFileSync(join(d, 'run.json'), `${manifest.slice(0, -1)},"pad":[${pad}]}`);
    });
    const size = readFileSync(join(dir, 'run.json')).length;
    expect(size).toBeGreaterThan(7.6 * 1024 * 1024);
    expect(laneward(['artifact', 'ack', dir, '--consumer', 'q']).code).toBe(0);
    expect(readFileSync(join(dir, 'run.json')).length - size).toBeLessThan(100);
    expect(laneward(['artifact', 'validate', dir]).code).toBe(0);
  }, 60_000);

  test('should refuse a symlinked run.json with exit 3 and leave the link and its target alone', () => {
    const dir = run('symlinked', (d) => {
      renameSync(join(d, 'run.json'), join(d, 'real.json'));
      symlinkSync('real.json', join(d, 'run.json'));
    });
    const before = readFileSync(join(dir, 'real.json'));
    const result = laneward(['artifact', 'ack', dir, '--consumer', 'q']);
    expect(result.code).toBe(3);
    expect(codesOf(result.stderr)).toEqual(['ACK_REFUSED']);
    expect(readlinkSync(join(dir, 'run.json'))).toBe('real.json');
    expect(readFileSync(join(dir, 'real.json'))).toEqual(before);
  });

  test('should clean the temp file a killed ack left, and leave a live writer\'s alone', () => {
    const dir = run('temps');
    const dead = join(dir, `.run.json.${deadPid()}.1700000000000.0.tmp`);
    const live = join(dir, `.run.json.${process.pid}.${Date.now()}.0.tmp`);
    writeFileSync(dead, '{"half":');
    writeFileSync(live, '{"being written":');
    expect(laneward(['artifact', 'ack', dir, '--consumer', 'q']).code).toBe(0);
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([live.slice(dir.length + 1)]);
  });

  test('should record the consumer in a run whose phases are named constructor and __proto__', () => {
    const dir = run('reserved', (d) => {
      const skipped = '{"native":{"status":"skipped"},"outside":{"status":"skipped"}}';
      const text = readFileSync(join(d, 'run.json'), 'utf8').replace('"phases": {', `"phases": {"constructor": ${skipped}, "__proto__": ${skipped}, `);
      writeFileSync(join(d, 'run.json'), text);
    });
    expect(laneward(['artifact', 'ack', dir, '--consumer', 'q']).code).toBe(0);
    expect(readFileSync(join(dir, 'run.json'), 'utf8')).toContain('"__proto__": {"native"');
  });
});

describe('laneward artifact ack: what cannot be locked', () => {
  test('should refuse an absent run as validate reports it, without creating a lock', () => {
    const absent = laneward(['artifact', 'ack', join(root, 'nowhere', 'run.json'), '--consumer', 'q']);
    expect(absent.code).toBe(3);
    expect(codesOf(absent.stderr)).toEqual(['ARTIFACT_MISSING', 'ACK_REFUSED']);
    expect(absent.stderr).not.toContain('INTERNAL');
  });
});
