import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { McpHost } from '../../src/mcp/host.js';
import { ServerLog } from '../../src/mcp/server-log.js';
import { MASK, SecretMasker } from '../../src/util/secrets.js';
import { FAST_RESTARTS, fixtureEntry, startHost, tempProject } from '../helpers/project.js';

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

const KIB = 1024;

/** The log files of one server in `dir`, with their sizes: `{ 'noisy.log': 65000, 'noisy.log.1': ... }`. */
function logFiles(dir: string, server: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const name of readdirSync(dir).sort())
    if (name === `${server}.log` || name.startsWith(`${server}.log.`))
      out[name] = statSync(join(dir, name)).size;
  return out;
}

describe('server logs are capped', () => {
  it('rotates the log of a server flooding stderr (limits in tack.json), keeping the newest lines and tack’s notes', async () => {
    using project = tempProject();
    project.write('tack.json', {
      mcpServers: { noisy: fixtureEntry('noisy-server.js', ['--stderr-bytes', String(1024 * KIB)]) },
      limits: { serverLogBytes: 64 * KIB, serverLogFiles: 2 },
    });
    const config = project.load();
    const logDir = config.paths.logDir;
    const host = await McpHost.start({ config, restartPolicy: FAST_RESTARTS });
    let last = 0;
    try {
      expect(host.servers()[0]?.status).toBe('connected');
      const result = await host.callTool('mcp__noisy__shout', { bytes: 256 * KIB });
      last = Number(/wrote up to line (\d+)/.exec(JSON.stringify(result.content))?.[1]);
      expect(last).toBeGreaterThan(12_000); // 1.25 MB of 101-byte lines
      await expect
        .poll(() => readFileSync(join(logDir, 'noisy.log'), 'utf8'), { timeout: 5000 })
        .toContain(`noisy: done, ${last} lines`);
    } finally {
      await host.close();
    }
    const sizes = logFiles(logDir, 'noisy');
    expect(Object.keys(sizes)).toEqual(['noisy.log', 'noisy.log.1', 'noisy.log.2']);
    for (const size of Object.values(sizes)) expect(size).toBeLessThanOrEqual(64 * KIB);
    // How full a rotated file is depends on how the pipe cut the stream (chunks of up to 64 KiB), not on tack.
    expect(sizes['noisy.log.1']).toBeGreaterThan(0);
    const current = readFileSync(join(logDir, 'noisy.log'), 'utf8');
    const older = readFileSync(join(logDir, 'noisy.log.1'), 'utf8');
    // The newest lines, in order, across the rotation: the last ones in noisy.log, those before in noisy.log.1.
    const numbers = (text: string) => [...text.matchAll(/^noisy line (\d+) /gm)].map((m) => Number(m[1]));
    const newest = [...numbers(older), ...numbers(current)];
    expect(newest.at(-1)).toBe(last);
    expect(newest).toEqual(newest.map((_, i) => last - newest.length + 1 + i));
    // tack's own notes go on after the rotations, the first of them saying where the older lines went.
    expect(current).toMatch(
      /^\[tack [^\]]+\] log rotated past 65536 bytes \(limits\.serverLogBytes\); older lines are in .*noisy\.log\.1\n/,
    );
  });

  it('keeps the cap across runs: a log already over it is rotated first, its newest part kept', async () => {
    using project = tempProject();
    const dir = join(project.dir, 'logs');
    mkdirSync(dir);
    const old = Array.from({ length: 5000 }, (_, i) => `old line ${i}`).join('\n');
    writeFileSync(join(dir, 's.log'), `${old}\n`);
    writeFileSync(join(dir, 's.log.4'), 'left by a run that kept more files\n');
    const limits = { maxBytes: 8 * KIB, files: 1 };
    for (let run = 1; run <= 3; run++) {
      const log = new ServerLog('s', dir, undefined, limits);
      log.writeStderr(`run ${run} says hello\n`);
      log.note(`run ${run} closing`);
      await log.close();
    }
    const sizes = logFiles(dir, 's');
    expect(Object.keys(sizes)).toEqual(['s.log', 's.log.1']);
    const rotated = readFileSync(join(dir, 's.log.1'), 'utf8');
    expect(sizes['s.log.1']).toBeLessThanOrEqual(8 * KIB);
    expect(rotated.trimEnd().split('\n').at(-1)).toBe('old line 4999'); // the newest part, from a line start
    expect(rotated.split('\n')[0]).toMatch(/^old line \d+$/);
    const current = readFileSync(join(dir, 's.log'), 'utf8');
    expect(current).toContain('run 1 says hello\n');
    expect(current).toMatch(/\] run 3 closing\n$/);
  });

  it('with no rotated files to keep (serverLogFiles 0), cuts the log to its newest half in place', async () => {
    using project = tempProject();
    const dir = join(project.dir, 'logs');
    const log = new ServerLog('s', dir, undefined, { maxBytes: 4 * KIB, files: 0 });
    for (let i = 0; i < 400; i++) log.writeStderr(`line ${String(i).padStart(4, '0')} ${'y'.repeat(40)}\n`);
    log.note('still noting');
    await log.close();
    expect(Object.keys(logFiles(dir, 's'))).toEqual(['s.log']);
    const text = readFileSync(join(dir, 's.log'), 'utf8');
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(4 * KIB);
    expect(text).toMatch(/^\[tack [^\]]+\] log cut to its newest \d+ bytes \(limits\.serverLogBytes\)\n/);
    expect(text).toMatch(/line 0399 y+\n\[tack [^\]]+\] still noting\n$/);
  });

  it('keeps the newest lines of one burst larger than the whole cap, and says what was left out', async () => {
    using project = tempProject();
    const dir = join(project.dir, 'logs');
    const log = new ServerLog('s', dir, undefined, { maxBytes: 4 * KIB, files: 1 });
    const burst = Array.from({ length: 1000 }, (_, i) => `burst ${i} ${'z'.repeat(20)}`).join('\n');
    log.writeStderr(Buffer.from(`${burst}\n`));
    await log.close();
    const text = readFileSync(join(dir, 's.log'), 'utf8');
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(4 * KIB);
    expect(text).toMatch(
      /^\[tack [^\]]+\] \d+ bytes of output left out here: one burst over the 4096-byte log cap/,
    );
    expect(text).toMatch(/\nburst \d+ z{20}\n/); // whole lines only
    expect(text.endsWith(`burst 999 ${'z'.repeat(20)}\n`)).toBe(true);
    expect(log.tail().at(-1)).toBe(`burst 999 ${'z'.repeat(20)}`);
  });
});
