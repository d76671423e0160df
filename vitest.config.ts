import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Process tests spawn real children and mostly wait on them: two files at once keep
    // both cores busy (one at a time took 694 s, two 383 s). Budgets in tests are seconds.
    maxWorkers: 4,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
