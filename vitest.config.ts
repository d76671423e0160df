import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Process tests spawn real children; two cores are shared by every file.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
