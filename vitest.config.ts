import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Real servers start as child processes; give them room on a loaded CI box.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    globalSetup: ['test/global-setup.ts'],
  },
});
