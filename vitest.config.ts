import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Process tests spawn real children and wait on them: four files at once keep both
    // cores busy (one at a time took 694 s, two 386 s, three 305 s, four 268 s). Budgets in
    // tests are seconds, and a test's own budget must allow for a runtime starting under
    // that load.
    maxWorkers: 4,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
