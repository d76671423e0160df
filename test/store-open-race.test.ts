import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { openStore, readJournal } from '../main/store/store.ts';
import { BUNDLE, ensureBuilt, ROOT } from './helpers/cli.ts';
import { tempRoot } from './helpers/tmp.ts';

// Chains of short-lived writers on one state root, each reading what its predecessor
// committed, beside processes that only open the store. An open that put an older
// last-transaction id back (the race the guarded LMDB build closes) shows as a writer
// reading its predecessor's record without the predecessor's commit, and as a commit
// missing from the journal afterwards. On the unguarded build this size loses or reads
// stale at least one commit in most runs; the guarded build never does.
const CHAINS = 12;
const STEPS = 40;
const OPENERS = 8;

interface Exit {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

describe('store opened and written by many processes at once', () => {
  const root = tempRoot('store-race');
  const chain = join(root, 'chain.mjs');
  // Children start without the CA bundle (80 ms of every start here) and find the native
  // addons in the checkout's node_modules, as the bundle beside them does.
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_PATH: join(ROOT, 'node_modules') };
  delete env.NODE_EXTRA_CA_CERTS;

  beforeAll(async () => {
    await build({
      entryPoints: [join(ROOT, 'test/helpers/store-chain-main.ts')],
      outfile: chain,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      external: ['lmdb', 'cbor-extract', '@napi-rs/nice', 'msgpackr-extract'],
      banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
      logLevel: 'warning',
    });
  });

  const run = (args: string[]) =>
    new Promise<Exit>((resolve, reject) => {
      const child = spawn(process.execPath, [chain, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
      child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
      child.once('error', reject);
      child.once('close', (code) => resolve({ code, stdout, stderr }));
    });

  it(`${CHAINS} chains of ${STEPS} writers beside ${OPENERS} openers lose no commit and read none stale`, { timeout: 600_000 }, async () => {
    const state = join(root, 'state');
    const committed: string[] = [];
    const stale: string[] = [];
    const failed: string[] = [];
    let writing = true;
    const opener = async () => {
      while (writing) {
        const r = await run(['open', state]);
        if (r.code !== 0) failed.push(`open exit ${r.code}: ${r.stderr.trim()}`);
      }
    };
    const writerChain = async (c: number) => {
      let expected = 0;
      for (let s = 0; s < STEPS; s++) {
        const marker = `${c}-${s}`;
        const r = await run(['write', state, `chain-${c}`, String(expected), marker]);
        if (r.code === 0 || r.code === 3) committed.push(marker);
        if (r.code === 0) expected += 1;
        else if (r.code === 3) {
          stale.push(r.stdout.trim());
          expected = Number(/read=(\d+)/.exec(r.stdout)?.[1]) + 1;
        } else failed.push(`${marker} exit ${r.code}: ${r.stderr.trim()}`);
      }
    };
    // The store exists before the openers start: the first open creates it alone.
    expect(await run(['open', state])).toMatchObject({ code: 0, stderr: '' });
    const openers = Array.from({ length: OPENERS }, opener);
    try {
      await Promise.all(Array.from({ length: CHAINS }, (_, c) => writerChain(c)));
    } finally {
      writing = false;
      await Promise.all(openers);
    }
    const store = openStore(state);
    const present = new Set<string>();
    for (let c = 0; c < CHAINS; c++) {
      for (const event of readJournal(store, `chain-${c}`)) present.add((event as unknown as { marker: string }).marker);
    }
    const lost = committed.filter((m) => !present.has(m));
    // Every commit a writer reported is there; no writer read a record without its predecessor's commit.
    expect({ stale, lost }).toEqual({ stale: [], lost: [] });
    // A process that could not open or write the store failed typed, having reported no commit:
    // LMDB's writer lock refuses begins (EINVAL) now and then under this many openers (README).
    expect(failed.filter((f) => !/code: 'STATE_UNAVAILABLE'/.test(f))).toEqual([]);
    expect(committed.length + failed.filter((f) => !f.startsWith('open ')).length).toBe(CHAINS * STEPS);
    process.stdout.write(`store-open-race: writers=${CHAINS * STEPS} committed=${committed.length} stale=${stale.length} lost=${lost.length} failed_typed=${failed.length}\n`);
  });

  it('should refuse to open a store on the unguarded prebuilt LMDB (STATE_UNAVAILABLE, exit 1), creating nothing', () => {
    ensureBuilt();
    const state = join(root, 'refused');
    // PREBUILDS_ONLY makes the package's loader skip the guarded build for its prebuilt one.
    const r = spawnSync(process.execPath, [BUNDLE, 'qa', 'turn', '--lane', 'a', '--role', 'user', '--text', 'x', '--state', state], { env: { ...env, PREBUILDS_ONLY: '1' }, encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/lacks the open-race guard.*\(STATE_UNAVAILABLE\)$/m);
    expect(r.stdout).toBe('');
    expect(existsSync(state)).toBe(false);
  });

  it('should clear the reader slot of a process killed mid-read while it stays open (seconds, not ten minutes)', { timeout: 90_000 }, async () => {
    const state = join(root, 'readers');
    const store = openStore(state, { batched: true });
    const holder = spawn(
      process.execPath,
      ['-e', `const { open } = require('lmdb'); const env = open({ path: ${JSON.stringify(state)}, maxDbs: 16 }); env.useReadTransaction(); process.stdout.write('ready\\n'); setInterval(() => {}, 1000);`],
      { stdio: ['ignore', 'pipe', 'inherit'], env },
    );
    try {
      await new Promise<void>((resolve, reject) => {
        holder.stdout.setEncoding('utf8').on('data', (c: string) => c.includes('ready') && resolve());
        holder.once('exit', () => reject(new Error('the reader exited before it was ready')));
      });
      const slotOf = () => store.runs.readerList().split('\n').some((line) => line.trim().split(/\s+/)[0] === String(holder.pid));
      expect(slotOf()).toBe(true);
      holder.kill('SIGKILL');
      await new Promise((resolve) => holder.once('exit', resolve));
      // The store's periodic check frees it; lmdb alone would keep it for ten minutes.
      const end = Date.now() + 60_000;
      while (slotOf() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 250));
      expect(slotOf()).toBe(false);
    } finally {
      holder.kill('SIGKILL');
    }
  });
});
