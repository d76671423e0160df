import { defineConfig } from 'vitest/config';

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
