import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Real servers start as child processes; give them room on a loaded CI box.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // expect.poll waits 1 s by default: on a loaded 2-core CI box a render, a restart or a log line can take
    // longer than that, and a poll that passes later passes all the same (a test that must see something
    // quickly says so with its own timeout).
    expect: { poll: { timeout: 10_000 } },
    pool: 'forks',
    globalSetup: ['test/global-setup.ts'],
  },
});
