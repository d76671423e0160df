import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Process tests spawn real children and wait on them: three files at once keep both
    // cores busy (one at a time took 694 s, two 386 s, three 305 s). Four took 268 s, but
    // under that load plan-concurrency's 20 processes on one state root met LMDB's writer
    // lock refusing begins (EINVAL, docs/store.md) in one of seven clean-clone runs. Budgets
    // in tests are seconds, and a test's own budget must allow for a runtime starting under
    // that load.
    maxWorkers: 3,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // A test process that dies leaves only "Worker exited unexpectedly": the second
    // reporter names the file and the tests that were running (UNFINISHED: lines).
    reporters: ['default', './test/helpers/unfinished-reporter.ts'],
  },
});
