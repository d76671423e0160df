import { spawn } from 'node:child_process';
import { closeSync, existsSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { nowMs } from '../workers/supervise/monotonic-timer.ts';
import { readProcStat, statScratch } from '../workers/supervise/proc-stat.ts';
import { openStreamSink } from '../workers/supervise/stream-file.ts';
import type { OrphanRef, SupervisionSpec } from '../workers/supervise/spec.ts';
import { supervise, TREE_VAR } from '../workers/supervise/supervise.ts';
import { ROOT } from './helpers/cli.ts';
import { canRun, killQuietly, pidsIn, pidsNaming, settleTagged, until } from './helpers/procs.ts';
import { tempRoot } from './helpers/tmp.ts';

// A preset's output goes to files its CLI holds itself, so what it streams outlives its
// supervisor; a later supervisor adopts the orphan by following the same file from its
// start: its lease renewed by the marks it streams, its result, session and cost taken
// at its end, its tree torn down with proof. Orphans are made here as a supervisor that
// died leaves them: detached, their stdout and stderr files of their own.

const NODE = process.execPath;
const CLI = join(ROOT, 'fixtures/providers/claude-like.mjs');
const TAG_VALUE = `${process.pid}-${Date.now()}`;
const TAG = `LANEWARD_ORPHAN_STREAM_TEST=${TAG_VALUE}`;
const root = tempRoot('supervision-orphan-stream');
let serial = 0;

afterEach(async () => {
  const leaked = await settleTagged(TAG, 3_000);
  for (const pid of leaked) killQuietly(pid);
  expect(leaked, 'processes of this test still running').toEqual([]);
});

function files(): { stdout: string; stderr: string } {
  serial += 1;
  return { stdout: join(root, `call-${serial}.stdout`), stderr: join(root, `call-${serial}.stderr`) };
}

function spec(over: Partial<SupervisionSpec>): SupervisionSpec {
  return {
    argv: [],
    stdio: 'pipe',
    action: 'review',
    descriptorSha256: null,
    mode: 'admitted_progress_inactivity',
    progress: 'preset',
    provider: 'claude-code',
    timeoutMs: 3_000,
    cleanupReserveMs: 0,
    postProviderMs: 5_000,
    graceMs: 500,
    teardownMs: 5_000,
    stdoutLimit: 1 << 20,
    stderrLimit: 1 << 20,
    env: { LANEWARD_ORPHAN_STREAM_TEST: TAG_VALUE },
    startedAt: nowMs(),
    ...over,
  };
}

/** Starts the fixture CLI as a dead supervisor leaves it: its own group, output to `out`, nobody waiting on it. */
function orphan(args: string[], out: { stdout: string; stderr: string }, tree = `tree-${serial}`): OrphanRef {
  const stdout = openStreamSink(out.stdout);
  const stderr = openStreamSink(out.stderr);
  try {
    const child = spawn(NODE, [CLI, ...args], { detached: true, stdio: ['ignore', stdout, stderr], env: { ...process.env, LANEWARD_ORPHAN_STREAM_TEST: TAG_VALUE, [TREE_VAR]: tree } });
    child.unref();
    const ticks = readProcStat(child.pid!, statScratch())!.startTime;
    return { pid: child.pid!, ticks };
  } finally {
    closeSync(stdout);
    closeSync(stderr);
  }
}

const text = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8') : '');

describe('supervise: a preset writes its output to files it holds', () => {
  test('should hand the CLI its stdout and stderr files, not pipes, and read its stream from them', async () => {
    const out = files();
    let fd1 = '';
    let fd2 = '';
    const outcome = await supervise(spec({ argv: [NODE, CLI, 'framed', '50', '4', 'frames'], stdoutFile: out.stdout, stderrFile: out.stderr }), undefined, {
      onSpawn: (pid) => {
        fd1 = readlinkSync(`/proc/${pid}/fd/1`);
        fd2 = readlinkSync(`/proc/${pid}/fd/2`);
      },
    });
    expect(fd1).toBe(out.stdout);
    expect(fd2).toBe(out.stderr);
    expect(outcome).toMatchObject({ status: 'ok', code: null, childExitCode: 0, attempts: 1, marks: 6, cleanupConfirmed: true });
    expect(outcome.provider).toMatchObject({ sessionId: 'sess-fixture', finalText: 'framed done', costUsd: 0.25, finished: true });
    expect(text(out.stdout).split('\n').filter((l) => l !== '')).toHaveLength(8);
  });
});

describe('supervise: adopting an orphan from its output file', () => {
  test('should renew its lease from the marks it streams and take its result, session and cost at its end', async () => {
    const out = files();
    // 12 marks 400 ms apart: 4.8 s of work, past the 3 s lease that only its marks renew.
    const ref = orphan(['framed', '400', '12', 'frames'], out);
    await until(() => text(out.stdout).includes('"init"'), 30_000, 'the orphan to start streaming');
    const outcome = await supervise(spec({ adopt: ref, stdoutFile: out.stdout, stderrFile: out.stderr }));
    expect(outcome).toMatchObject({ status: 'ok', code: null, childExitCode: null, attempts: 0, providerStarted: true, cleanupConfirmed: true });
    expect(outcome.marks).toBe(14);
    expect(outcome.provider).toMatchObject({ sessionId: 'sess-fixture', finalText: 'framed done', costUsd: 0.25, finished: true });
    expect(canRun(ref.pid)).toBe(false);
  });

  test('should take the outcome of an orphan that ended before it was adopted from what it wrote', async () => {
    const out = files();
    const ref = orphan(['linger', '0'], out);
    await until(() => !canRun(ref.pid), 30_000, 'the orphan to end');
    const outcome = await supervise(spec({ adopt: ref, stdoutFile: out.stdout, stderrFile: out.stderr }));
    expect(outcome).toMatchObject({ status: 'ok', code: null, attempts: 0, cleanupConfirmed: true });
    expect(outcome.provider).toMatchObject({ sessionId: 'sess-fixture', finalText: 'final answer', costUsd: 0.25, finished: true });
  });

  test('should expire the lease of an orphan whose stream went quiet and tear its tree down with proof, a hook in a session of its own included', async () => {
    const out = files();
    const hookPid = join(root, `hook-${serial}.pid`);
    // Streams two lines, then nothing; on SIGTERM it starts a hook in a session of its own and exits.
    const ref = orphan(['hook-on-term', hookPid], out);
    await until(() => text(out.stdout).includes('working'), 30_000, 'the orphan to start streaming');
    const started = nowMs();
    const outcome = await supervise(spec({ adopt: ref, stdoutFile: out.stdout, stderrFile: out.stderr, timeoutMs: 1_000 }));
    expect(outcome).toMatchObject({ status: 'timeout', code: 'LEASE_EXPIRED', attempts: 0, cleanupConfirmed: true });
    expect(nowMs() - started).toBeGreaterThanOrEqual(1_000);
    expect(canRun(ref.pid)).toBe(false);
    // The hook carried the orphan's tree tag: found by it and proven gone with the rest.
    // A hook torn down before its first command never wrote its pid (seen under load): then
    // no process naming its pidfile (its shells' command lines do) may be left either.
    await until(() => existsSync(hookPid) && pidsIn(hookPid).length > 0, 2_000, 'the hook to write its pid').catch(() => undefined);
    expect(pidsNaming(hookPid)).toEqual([]);
    for (const pid of existsSync(hookPid) ? pidsIn(hookPid) : []) expect(canRun(pid), `hook ${pid}`).toBe(false);
  });
});
