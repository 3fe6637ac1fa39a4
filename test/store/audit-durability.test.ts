import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { AUDIT_FLUSH_INTERVAL_MS } from '../../src/store/audit.js';
import { TackStore } from '../../src/store/store.js';
import { digest } from '../../src/util/canonical-json.js';
import { BIN } from '../helpers/cli.js';
import { startTackServe } from '../helpers/processes.js';
import { fixtureEntry, tempProject } from '../helpers/project.js';

/**
 * The audit log is written in batches off the request path (store/audit.ts): a row waits at most one flush
 * interval (100 ms) in memory. So a `tack serve` killed outright (SIGKILL: no exit handler runs) loses at most
 * the rows of the calls answered within the last interval before the kill, never one answered before the last
 * flush. Committed batches survive the process (SQLite WAL, synchronous = NORMAL).
 *
 * The test kills a real `tack serve --http` under load from four clients and reopens its store. The bound it
 * checks is the interval plus a margin for a loaded 2-core machine, whose event loop may run a timer late.
 */

const MARGIN_MS = 1000;

describe('audit log durability', () => {
  it('keeps every call answered before a flush point when tack serve is killed with SIGKILL mid-load', async () => {
    using project = tempProject();
    const configFile = project.write('tack.json', { mcpServers: { fx: fixtureEntry('stdio-server.js') } });
    const serve = await startTackServe(BIN, configFile, project.env);
    const clients: Client[] = [];
    const answered = new Map<string, number>(); // argsSha256 -> when the answer arrived
    let sent = 0;
    try {
      for (let i = 0; i < 4; i++) {
        const client = new Client(
          { name: `load-${i}`, version: '1' },
          { versionNegotiation: { mode: i % 2 ? 'auto' : 'legacy' } },
        );
        await client.connect(new StreamableHTTPClientTransport(new URL(serve.url)));
        clients.push(client);
      }
      const call = async (client: Client) => {
        const args = { text: `call ${sent++}` };
        await client.callTool({ name: 'fx__echo', arguments: args });
        answered.set(digest(args), Date.now());
      };
      // Before the flush point: 40 calls, then more than an interval of quiet.
      for (let i = 0; i < 10; i++) await Promise.all(clients.map(call));
      const beforeFlushPoint = new Set(answered.keys());
      await new Promise((resolve) => setTimeout(resolve, AUDIT_FLUSH_INTERVAL_MS * 3));

      // Under load: the four clients call in a loop until the process is killed.
      let killedAt = 0;
      const loops = clients.map(async (client) => {
        while (!killedAt) await call(client).catch(() => {});
      });
      // 2.5 s: calls answered in the first 1.4 s are past the flush point and margin, and a loaded machine
      // answers some in that time (in 1.5 s, 0.4 s were left for them).
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      killedAt = Date.now();
      serve.process.kill('SIGKILL');
      await new Promise((resolve) => serve.process.once('exit', resolve));
      await Promise.all(loops);

      const store = TackStore.open(join(project.home, 'state', 'tack.db'));
      let logged: Set<string>;
      try {
        logged = new Set(store.audit.recentSync(100_000).map((entry) => entry.argsSha256));
      } finally {
        store.close();
      }
      for (const key of beforeFlushPoint) expect(logged.has(key)).toBe(true);
      const safe = [...answered].filter(([, at]) => at < killedAt - AUDIT_FLUSH_INTERVAL_MS - MARGIN_MS);
      const missing = safe.filter(([key]) => !logged.has(key));
      expect(safe.length).toBeGreaterThan(beforeFlushPoint.size);
      expect(missing).toEqual([]);
      // Nothing is recorded that was not called.
      expect(logged.size).toBeLessThanOrEqual(sent);
      const lost = [...answered.keys()].filter((key) => !logged.has(key)).length;
      console.info(
        `audit durability: ${answered.size} calls answered, ${logged.size} rows kept, ${lost} answered calls lost to the SIGKILL`,
      );
    } finally {
      await Promise.all(clients.map((client) => client.close().catch(() => {})));
      await serve.stop();
    }
  }, 60_000);
});
