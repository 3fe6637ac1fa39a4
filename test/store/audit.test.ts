import { describe, expect, it } from 'vitest';
import { McpHost } from '../../src/mcp/host.js';
import { TackStore } from '../../src/store/store.js';
import { MASK } from '../../src/util/secrets.js';
import { fixtureEntry, tempProject } from '../helpers/project.js';

describe('the audit log', () => {
  it('stores error details with the servers’ configured secrets and key shapes masked', async () => {
    using project = tempProject();
    const store = TackStore.open(':memory:');
    try {
      const config = project.config({
        api: {
          type: 'http',
          url: 'http://127.0.0.1:9/mcp',
          headers: { Authorization: 'Bearer hdr-T0ken-77aa' },
        },
        local: fixtureEntry('stdio-server.js', [], { env: { DB_PASSWORD: 'pw-for-the-db' } }),
      });
      // The host registers its servers' secrets with the store it uses; nothing is started.
      new McpHost({ config, store, logDir: false });
      const key = `ghp_${'k3Y'.repeat(12)}`;
      await store.audit.record({
        at: new Date().toISOString(),
        client: 'test',
        server: 'api',
        tool: 'query',
        argsSha256: '0'.repeat(64),
        durationMs: 1,
        outcome: 'failed',
        detail: `401: token hdr-T0ken-77aa rejected; pw-for-the-db is wrong; ${key} revoked`,
      });
      const [entry] = await store.audit.recent(1);
      expect(entry!.detail).toBe(`401: token ${MASK} rejected; ${MASK} is wrong; ghp_${MASK} revoked`);
    } finally {
      store.close();
    }
  });
});
