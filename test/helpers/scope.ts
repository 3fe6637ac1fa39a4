import { afterEach } from 'vitest';
import { type FakeProvider, type FakeScript, startFakeProvider } from './fake-provider.js';
import { type TempProject, tempProject } from './project.js';

export type Cleanup = () => Promise<void> | void;

/**
 * What a test file starts and must stop: cleanups run after each test, newest first. `fake` and `project`
 * start a fake model server and a temporary project that go away with the test.
 */
export interface TestScope {
  cleanups: Cleanup[];
  defer(cleanup: Cleanup): void;
  fake(script: FakeScript): Promise<FakeProvider>;
  project(prefix?: string): TempProject;
}

export function testScope(): TestScope {
  const cleanups: Cleanup[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return {
    cleanups,
    defer: (cleanup) => {
      cleanups.push(cleanup);
    },
    async fake(script) {
      const provider = await startFakeProvider(script);
      cleanups.push(() => provider.close());
      return provider;
    },
    project(prefix) {
      const p = tempProject(prefix);
      cleanups.push(() => p[Symbol.dispose]());
      return p;
    },
  };
}
