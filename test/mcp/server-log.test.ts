import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ServerLog } from '../../src/mcp/server-log.js';
import { MASK, SecretMasker } from '../../src/util/secrets.js';
import { fixtureEntry, startHost, tempProject } from '../helpers/project.js';

const TOKEN = 'vault-T0ken-5f1e9a7c';

describe('server logs mask secrets', () => {
  it('a server printing its configured secret and key shapes to stderr: the log file has them masked', async () => {
    using project = tempProject();
    const host = await startHost(project, {
      vault: fixtureEntry('secret-server.js', [], { env: { SERVICE_TOKEN: TOKEN } }),
    });
    let tail: string[];
    try {
      const result = await host.callTool('mcp__vault__status', {});
      // The server itself works with the real value: masking is for what tack writes down.
      expect(JSON.stringify(result.content)).toContain(TOKEN);
      tail = host.connection('vault').log.tail();
    } finally {
      await host.close();
    }
    const log = readFileSync(join(project.load().paths.logDir, 'vault.log'), 'utf8');
    expect(log).toContain(`connecting to the backend as ${MASK} now`);
    expect(log).toContain(`SERVICE_TOKEN=${MASK}`);
    expect(log).toContain(`found ghp_${MASK} and AKIA${MASK} in the old config`);
    expect(log).toContain(`-----BEGIN OPENSSH PRIVATE KEY-----${MASK}\n-----END OPENSSH PRIVATE KEY-----`);
    // The unfinished last line is written (masked) when the server goes away.
    expect(log).toContain(`last words ${MASK}`);
    for (const leak of [TOKEN, 'Z9y8X7w6', 'QX7ZB4QX', 'b3BlbnNzaC1rZXkt', 'QyNTUxOQAAAC']) {
      expect(log).not.toContain(leak);
      expect(tail.join('\n')).not.toContain(leak);
    }
    expect(tail.join('\n')).toContain(`connecting to the backend as ${MASK} now`);
  });

  it('masks a secret split across stderr chunks, and tack’s own notes too', async () => {
    using project = tempProject();
    const file = join(project.dir, 'logs');
    const log = new ServerLog('s', file, new SecretMasker({ values: [TOKEN] }));
    log.writeStderr(Buffer.from(`using ${TOKEN.slice(0, 7)}`));
    log.writeStderr(Buffer.from(`${TOKEN.slice(7)} ok\nnext`));
    expect(log.tail()).toEqual([`using ${MASK} ok`, 'next']);
    log.note(`starting: node server.js --token ${TOKEN}`);
    await log.close();
    const text = readFileSync(join(file, 's.log'), 'utf8');
    expect(text).not.toContain(TOKEN);
    expect(text).toMatch(
      new RegExp(
        `^using ${MASK} ok\\nnext\\n\\[tack [^\\]]+\\] starting: node server.js --token ${MASK}\\n$`,
      ),
    );
  });
});
