import { describe, expect, it } from 'vitest';
import type { StdioServerConfig } from '../../src/config/load.js';
import { stdioEnvironment } from '../../src/mcp/transport.js';
import { fixtureEntry, startHost, tempProject } from '../helpers/project.js';

describe('the environment a stdio server sees', () => {
  it('holds the safe defaults and the entry env, never a secret of the parent', async () => {
    process.env.TACK_TEST_PARENT_SECRET = 'sk-live-should-never-leak';
    process.env.TACK_TEST_FOR_EXPANSION = 'expanded-value';
    using project = tempProject(); // its env is a copy of process.env, secret included
    try {
      const host = await startHost(project, {
        s: fixtureEntry('stdio-server.js', [], {
          env: { GIVEN: 'by-config', FROM_PARENT: '${TACK_TEST_FOR_EXPANSION}' },
        }),
      });
      try {
        const result = await host.callTool('mcp__s__env', {});
        const env = (result.structuredContent as { env: Record<string, string> }).env;
        expect(env.GIVEN).toBe('by-config');
        expect(env.FROM_PARENT).toBe('expanded-value');
        expect(env.PATH).toBe(process.env.PATH);
        expect(env.HOME).toBe(process.env.HOME);
        expect(JSON.stringify(env)).not.toContain('sk-live-should-never-leak');
        // Nothing beyond the SDK's safe set (HOME, LOGNAME, PATH, SHELL, TERM, USER), the entry's env and what
        // the child's own runtime sets for itself.
        const allowed = new Set(['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER', 'GIVEN', 'FROM_PARENT']);
        const extra = Object.keys(env).filter((key) => !allowed.has(key));
        expect(extra.filter((key) => key in process.env)).toEqual([]);
        // What `tack scan` lists is what the process got: every listed name arrived with its value.
        const entry = host.connection('s').config as StdioServerConfig;
        const listed = stdioEnvironment(entry);
        for (const { name } of listed.variables) expect(env[name], name).toBe(listed.env[name]);
        expect(listed.variables.map((v) => v.name)).toEqual(
          Object.keys(env)
            .filter((key) => allowed.has(key))
            .sort(),
        );
        expect(listed.variables.filter((v) => v.source === 'configured').map((v) => v.name)).toEqual([
          'FROM_PARENT',
          'GIVEN',
        ]);
      } finally {
        await host.close();
      }
    } finally {
      delete process.env.TACK_TEST_PARENT_SECRET;
      delete process.env.TACK_TEST_FOR_EXPANSION;
    }
  });
});
