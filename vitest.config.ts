import { defineConfig } from 'vitest/config';

// No test talks TLS (the model server, the console and Redis are plain loopback), yet
// with NODE_EXTRA_CA_CERTS set every node process the suite starts (the test files' forks,
// every laneward CLI, every fixture provider, reviewer and observer) reads and parses the
// certificate bundle first: 50-60 ms of CPU of each start here, on about 190 starts in
// deadline-cli alone. Removed before the forks start, so every child inherits its absence.
delete process.env['NODE_EXTRA_CA_CERTS'];

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Process tests spawn real children and wait on them, so more files at once than cores
    // keep both cores busy (one at a time took 694 s, two 386 s, three 305 s, four 268 s,
    // when the suite was a third of its size). At three, the whole suite took 823 s of a
    // 14.6-minute clean-clone CI: four keep it inside CI's 15 minutes. Under four,
    // plan-concurrency's 20 processes on one state root once met LMDB's writer lock refusing
    // begins (EINVAL, docs/store.md), in one of seven clean-clone runs. Budgets in tests are
    // seconds, and a test's own budget must allow for a runtime starting under that load.
    maxWorkers: 4,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // A test process that dies leaves only "Worker exited unexpectedly": the second
    // reporter names the file and the tests that were running (UNFINISHED: lines).
    reporters: ['default', './test/helpers/unfinished-reporter.ts'],
  },
});
