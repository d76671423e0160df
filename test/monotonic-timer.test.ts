import { spawn } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import { DeadlineTimer, nowMs } from '../workers/supervise/monotonic-timer.ts';
import { until as waitFor } from './helpers/procs.ts';

describe('DeadlineTimer', () => {
  test('should read progress already waiting in a pipe before judging an overdue deadline', async () => {
    // A child writes one byte at once; the loop is then held up (a busy machine) well
    // past the deadline, with the byte waiting in the pipe. The byte renews the deadline.
    const child = spawn('sh', ['-c', 'printf x; sleep 5'], { stdio: ['ignore', 'pipe', 'ignore'] });
    const fired: number[] = [];
    try {
      await new Promise((resolve) => child.once('spawn', resolve));
      const timer = new DeadlineTimer(nowMs() + 300, (late) => fired.push(late));
      let renewed = false;
      child.stdout!.once('data', () => {
        renewed = true;
        timer.rearm(nowMs() + 60_000);
      });
      const until = nowMs() + 1_500;
      while (nowMs() < until) {
        // Hold the loop: the timer is overdue and the byte is in the pipe when it lets go.
      }
      // The byte is read in the first poll phase after the loop lets go; the overdue
      // timer's judgment runs right after it (setImmediate). A timer that judged first
      // has fired by the time the byte is seen.
      await waitFor(() => renewed, 5_000, 'the byte in the pipe');
      await new Promise((resolve) => setImmediate(resolve));
      expect(fired).toEqual([]);
      timer.clear();
    } finally {
      child.kill('SIGKILL');
      await new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(null) : child.once('exit', resolve)));
    }
  });

  test('should fire once the deadline passes with nothing to renew it', async () => {
    const fired: number[] = [];
    const timer = new DeadlineTimer(nowMs() + 50, (late) => fired.push(late));
    await waitFor(() => fired.length > 0, 5_000, 'the deadline to fire');
    await new Promise((resolve) => setImmediate(resolve));
    timer.clear();
    expect(fired).toHaveLength(1);
    expect(fired[0]).toBeGreaterThanOrEqual(0);
  });
});
